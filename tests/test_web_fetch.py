"""The web_fetch tool end to end, against real HTTP servers on 127.0.0.1.

The guarded client's policy is relaxed for 127.0.0.1 (and a fake resolver gives test host names that
address), so loopback servers stand in for public sites; the private-address test uses the real policy.
"""
from __future__ import annotations

import json
import threading

import pytest

from tests.corpora import READABILITY_PAGES, needs
from tests.pdfs import make_pdf
from tests.servers import LoopbackServer, Reply, redirect
from webtools.net import AddressPolicy, HttpClient, client_for
from webtools.plugins.pdf import PdfIngester
from webtools.plugins.web_fetch import WebFetchOptionsForm, WebFetchPlugin
from webtools.runtime import Ingesters, PluginSetup, Registry, ToolError, Turn
from webtools.testing import tool_context_for_test

CORPUS = READABILITY_PAGES

ARTICLE = """<html><head><title>Tides and the Moon, explained simply | Ocean Notes</title></head><body>
<nav><a href="/">Home</a><a href="/about">NAVIGATION_ABOUT</a></nav>
<script>SCRIPT_BODY()</script>
<article><h1>Tides and the Moon, explained simply</h1>
<p>The Moon pulls on the oceans facing it a little harder than on the Earth as a whole, and on the Earth a
little harder than on the far oceans. Two bulges of water result, and the planet turns beneath them.</p>
<p>Most coasts therefore see two high tides a day. <a href="/springs">Spring tides</a> come when the Sun and
the Moon line up, and neap tides come when they pull at right angles to each other.</p>
</article><footer>FOOTER</footer></body></html>"""


def _resolver(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


@pytest.fixture
def client():
    with HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"]), resolver=_resolver) as c:
        yield c


@pytest.fixture
def server():
    with LoopbackServer() as s:
        yield s


def make_tool(**options):
    plugin = WebFetchPlugin()
    form = WebFetchOptionsForm(data={**plugin.default_options(), **options})
    assert form.is_valid(), form.errors
    registry = Registry()
    plugin.setup(PluginSetup("web_fetch", form.cleaned_data, registry, Ingesters()))
    return registry.get("web_fetch")


def call(client, url, offset=None, *, tool=None, ctx=None, ingesters=None, **options):
    tool = tool or make_tool(**options)
    if ctx is None:
        ctx, _ = tool_context_for_test(fetch=client, ingesters=ingesters)
    args = {"url": url} if offset is None else {"url": url, "offset": offset}
    return tool.handler(args, ctx)


def html(body: str | bytes, charset: str | None = "utf-8") -> Reply:
    ctype = "text/html" + (f"; charset={charset}" if charset else "")
    return Reply(200, {"Content-Type": ctype}, body)


# -- the plugin ------------------------------------------------------------------------------------


def test_tool_is_enabled_for_users_once_the_plugin_is_listed():
    tool = make_tool()
    assert tool.default_enabled and tool.is_enabled(None)
    assert tool.untrusted and tool.user_toggle
    assert tool.is_enabled(False) is False  # a user may switch it off
    assert WebFetchPlugin().user_settings_form({}) is None


def test_plugin_works_with_no_saved_options():
    registry = Registry()
    WebFetchPlugin().setup(PluginSetup("web_fetch", WebFetchPlugin().default_options(), registry, Ingesters(),
                                       configured=False))
    assert registry.get("web_fetch").input_schema["required"] == ["url"]


def test_user_toggle_option_controls_the_tool_switch():
    assert make_tool(user_toggle=False).user_toggle is False


def test_tool_description_and_schema_follow_the_spec():
    tool = make_tool()
    assert tool.description.startswith("Fetch a web page or document, such as a PDF")
    assert tool.input_schema["properties"]["offset"] == {
        "type": "integer", "minimum": 0,
        "description": tool.input_schema["properties"]["offset"]["description"],
    }


# -- pages -----------------------------------------------------------------------------------------


def test_html_page_returns_title_and_article_text_as_markdown_and_cites_the_final_url(client, server):
    server.route("/start", redirect("/tides"))
    server.route("/tides", html(ARTICLE))
    tool = make_tool()
    ctx, cited = tool_context_for_test(fetch=client)
    out = tool.handler({"url": server.url("/start")}, ctx)
    assert out["url"] == server.url("/tides")
    assert out["title"] == "Tides and the Moon, explained simply"
    assert "Two bulges of water result" in out["content"]
    assert f"[Spring tides]({server.url('/springs')})" in out["content"]
    assert "NAVIGATION_ABOUT" not in out["content"] and "SCRIPT_BODY" not in out["content"]
    assert out["offset"] == 0 and "nextOffset" not in out
    assert out["totalCharacters"] == len(out["content"])
    assert [(c.url, c.title) for c in cited] == [(server.url("/tides"), out["title"])]


def test_a_page_that_states_its_date_author_and_language_gives_them(client, server):
    dated = ARTICLE.replace("<html>", "<html lang='en'>").replace(
        "</head>", '<meta property="article:published_time" content="2024-05-01T09:00:00Z">'
                   '<meta name="author" content="Ada Tide"></head>')
    server.route("/dated", html(dated))
    out = call(client, server.url("/dated"))
    assert (out["published"], out["author"], out["language"]) == ("2024-05-01T09:00:00+00:00", "Ada Tide", "en")
    assert list(out)[:6] == ["url", "title", "type", "published", "author", "language"]
    assert out["type"] == "article"


def test_a_page_that_states_nothing_has_no_metadata_keys(client, server):
    server.route("/tides", html(ARTICLE))
    out = call(client, server.url("/tides"))
    assert not {"published", "author", "language"} & set(out)


def test_request_is_a_get_with_the_apps_user_agent(client, server):
    server.route("/", html(ARTICLE))
    tool = make_tool()
    ctx, _ = tool_context_for_test(fetch=client, user_agent="MyApp (+https://myapp.test/bot)")
    tool.handler({"url": server.url("/")}, ctx)
    page = [r for r in server.requests if r.path == "/"][0]
    assert page.method == "GET" and page.headers["User-Agent"] == "MyApp (+https://myapp.test/bot)"


def test_page_without_an_article_returns_its_text_without_navigation_or_scripts_and_with_absolute_links(
        client, server):
    server.route("/dir/list", html("""<html><head><title>Index</title></head><body>
        <nav><a href="/x">NAVIGATION</a></nav><script>SCRIPT()</script>
        <ul><li><a href="a.html">Alpha</a></li><li><a href="/b.html">Beta</a></li></ul></body></html>"""))
    out = call(client, server.url("/dir/list"))
    assert f"[Alpha]({server.url('/dir/a.html')})" in out["content"]
    assert f"[Beta]({server.url('/b.html')})" in out["content"]
    assert "NAVIGATION" not in out["content"] and "SCRIPT" not in out["content"]


def test_page_where_readability_returns_an_empty_body_falls_back_to_the_cleaned_page(client, server):
    cells = "".join(f"<div><b>Row {i}</b></div>" for i in range(30))
    server.route("/", html(f"<html><head><title>Grid</title></head><body>{cells}</body></html>"))
    out = call(client, server.url("/"))
    assert "Row 0" in out["content"] and "Row 29" in out["content"]


def test_plain_text_and_json_are_returned_as_text(client, server):
    server.route("/notes.txt", Reply(200, {"Content-Type": "text/plain"}, "line one\nline two\n"))
    server.route("/data.json", Reply(200, {"Content-Type": "application/json"}, '{"a": [1, 2]}'))
    server.route("/readme.md", Reply(200, {"Content-Type": "text/markdown"}, "# Read me\n\n*hi*"))
    server.route("/table.csv", Reply(200, {"Content-Type": "text/csv"}, "a,b\n1,2\n"))
    assert call(client, server.url("/notes.txt"))["content"] == "line one\nline two"
    assert json.loads(call(client, server.url("/data.json"))["content"]) == {"a": [1, 2]}
    assert call(client, server.url("/readme.md"))["content"] == "# Read me\n\n*hi*"
    assert call(client, server.url("/table.csv"))["content"] == "a,b\n1,2"


def test_xhtml_is_read_as_html(client, server):
    server.route("/", Reply(200, {"Content-Type": "application/xhtml+xml"},
                            '<?xml version="1.0" encoding="utf-8"?>' + ARTICLE))
    assert "Two bulges of water" in call(client, server.url("/"))["content"]


def test_rss_feed_lists_its_items(client, server):
    rss = """<?xml version="1.0"?><rss version="2.0"><channel><title>Ocean Notes</title>
      <item><title>Tides</title><link>https://ocean.test/tides</link>
      <pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate>
      <description>&lt;p&gt;Why &lt;b&gt;two&lt;/b&gt; tides a day.&lt;/p&gt;</description></item>
      <item><title>Waves</title><link>https://ocean.test/waves</link>
      <description>Wind and fetch.</description></item>
    </channel></rss>"""
    server.route("/feed", Reply(200, {"Content-Type": "application/rss+xml"}, rss))
    out = call(client, server.url("/feed"))
    assert out["title"] == "Ocean Notes"
    assert "## [Tides](https://ocean.test/tides)" in out["content"]
    assert "Why **two** tides a day." in out["content"]
    assert "## [Waves](https://ocean.test/waves)" in out["content"]


@pytest.mark.parametrize("reference", ["&#xD800;", "&#55296;", "&#0;", "&#x110000;", "&amp;#xDFFF;"])
def test_a_feed_referring_to_a_character_xml_forbids_is_read_with_a_replacement(client, server, reference):
    rss = f"""<?xml version="1.0"?><rss version="2.0"><channel><title>Odd {reference} feed</title>
      <item><title>One {reference} item</title><link>https://odd.test/1</link>
      <description>&lt;p&gt;Text {reference} here.&lt;/p&gt;</description></item></channel></rss>"""
    server.route("/feed", Reply(200, {"Content-Type": "application/rss+xml"}, rss))
    out = call(client, server.url("/feed"))
    assert out["title"].startswith("Odd ") and out["title"].endswith(" feed")
    assert "## [One" in out["content"] and "Text" in out["content"]
    assert all(not 0xD800 <= ord(c) <= 0xDFFF and c != "\0" for c in json.dumps(out, ensure_ascii=False))


def test_atom_feed_sent_as_xml_lists_its_entries(client, server):
    atom = """<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">
      <title>Blog</title><entry><title>First post</title><link href="https://blog.test/1"/>
      <updated>2024-01-01T00:00:00Z</updated><summary>Hello there.</summary></entry></feed>"""
    server.route("/atom", Reply(200, {"Content-Type": "text/xml"}, atom))
    out = call(client, server.url("/atom"))
    assert out["title"] == "Blog"
    assert "## [First post](https://blog.test/1)" in out["content"] and "Hello there." in out["content"]


def test_charset_from_the_content_type_header(client, server):
    body = "<html><body><p>Grüße aus Köln, schöne Straße.</p></body></html>".encode("iso-8859-1")
    server.route("/", html(body, charset="iso-8859-1"))
    assert "Grüße aus Köln" in call(client, server.url("/"))["content"]


def test_charset_from_the_pages_meta_element(client, server):
    body = ("<html><head><meta charset='windows-1251'><title>Новости</title></head>"
            "<body><p>Привет, мир! Это страница в кодировке windows-1251.</p></body></html>").encode("cp1251")
    server.route("/", html(body, charset=None))
    out = call(client, server.url("/"))
    assert out["title"] == "Новости" and "Привет, мир!" in out["content"]


def test_undecodable_bytes_are_replaced_not_raised(client, server):
    server.route("/", Reply(200, {"Content-Type": "text/plain; charset=utf-8"}, b"ok \xff\xfe end"))
    assert call(client, server.url("/"))["content"] == "ok \ufffd\ufffd end"


# -- errors ----------------------------------------------------------------------------------------


def test_unsupported_content_type_is_refused_before_its_body_is_read(client, server):
    sent = []

    def body():
        for _ in range(2000):
            sent.append(1)
            yield b"\0" * 65536

    server.route("/video", Reply(200, {"Content-Type": "video/mp4"}, body()))
    with pytest.raises(ToolError, match="video/mp4"):
        call(client, server.url("/video"))
    assert len(sent) < 100  # a few chunks at most sat in socket buffers; the 128 MB body was not read


def test_http_errors_are_tool_errors(client, server):
    server.route("/gone", Reply(404, {"Content-Type": "text/html"}, "<p>nope</p>"))
    server.route("/broken", Reply(500, {"Content-Type": "text/html"}, "oops"))
    with pytest.raises(ToolError, match=r"^Fetching http://127\.0\.0\.1:\d+/gone failed \(HTTP 404\)\.$"):
        call(client, server.url("/gone"))
    with pytest.raises(ToolError, match=r"\(HTTP 500\)"):
        call(client, server.url("/broken"))


@pytest.mark.parametrize("url", [
    "ftp://example.com/file", "file:///etc/passwd", "javascript:alert(1)", "example.com",
])
def test_non_http_urls_are_tool_errors(client, url):
    with pytest.raises(ToolError, match="Only http and https"):
        call(client, url)


@pytest.mark.parametrize("respect_robots_txt", [True, False])
def test_url_resolving_to_a_private_address_is_refused(server, respect_robots_txt):
    server.route("/", html(ARTICLE))
    server.route("/robots.txt", (200, {"Content-Type": "text/plain"}, "User-agent: *\nAllow: /\n"))
    with pytest.raises(ToolError) as refused:
        call(client_for(False), server.url("/page"), respect_robots_txt=respect_robots_txt)
    # Whether robots.txt is read first or not, the model learns the address itself is not allowed.
    assert refused.value.message == (
        f"The address {server.url('/page')} is not allowed: it resolves to a loopback address (127.0.0.1)."
    )
    assert server.requests == []


def test_timeouts_say_so(client, server):
    from tests.servers import trickle

    server.route("/slow", trickle(b"x" * 50, delay=0.2, headers={"Content-Type": "text/plain"}))
    with pytest.raises(ToolError, match="did not finish within 1 second"):
        call(client, server.url("/slow"), timeout_seconds=1)


# -- domain lists ----------------------------------------------------------------------------------


def test_a_denied_domain_or_one_of_its_subdomains_is_refused(client, server):
    server.route("*", html(ARTICLE))
    for host in ("example.com", "docs.example.com"):
        with pytest.raises(ToolError, match="not allowed"):
            call(client, server.url("/", host=host), deny_domains=["example.com"])
    out = call(client, server.url("/", host="badexample.com"), deny_domains=["example.com"])
    assert "Tides" in out["title"]
    assert server.hits("/") == 1


def test_with_an_allow_list_only_listed_domains_and_their_subdomains_are_fetched(client, server):
    server.route("*", html(ARTICLE))
    for host in ("example.com", "docs.example.com"):
        assert call(client, server.url("/", host=host), allow_domains=["example.com"])["content"]
    for host in ("badexample.com", "other.org"):
        with pytest.raises(ToolError, match="not allowed"):
            call(client, server.url("/", host=host), allow_domains=["example.com"])


def test_a_redirect_to_a_refused_domain_is_refused(client, server):
    server.route("/hop", redirect(server.url("/target", host="evil.example")))
    server.route("/target", html(ARTICLE))
    with pytest.raises(ToolError, match="evil.example.*not allowed|not allowed.*evil.example"):
        call(client, server.url("/hop", host="good.example"), deny_domains=["evil.example"])
    assert server.hits("/target") == 0


def test_more_than_five_redirects_is_an_error(client, server):
    for i in range(7):
        server.route(f"/r{i}", redirect(f"/r{i + 1}"))
    server.route("/r7", html(ARTICLE))
    assert call(client, server.url("/r2"))["url"] == server.url("/r7")  # five hops are fine
    with pytest.raises(ToolError, match="more than 5"):
        call(client, server.url("/r0"))


# -- one reading of the URL: the checks judge the host the client connects to (issue 9) ---------------


def test_an_allow_list_is_not_passed_by_a_backslash_before_user_info(client, server):
    # urllib.parse reads the host as example.com, urllib3 connects to evil.com: refused, unread.
    server.route("*", html(ARTICLE))
    with pytest.raises(ToolError, match="backslash") as refused:
        call(client, f"http://evil.com:{server.port}\\@example.com/", allow_domains=["example.com"])
    assert "robots" not in refused.value.message
    assert server.requests == []


@pytest.mark.parametrize("spelling", ["%65vil.com", "evil%2ecom", "EVIL.com.", "ｅｖｉｌ.com", "evil。com"])
def test_a_denied_domain_is_refused_however_its_host_is_spelled(client, server, spelling):
    server.route("*", html(ARTICLE))
    with pytest.raises(ToolError, match="the operator has blocked this domain"):
        call(client, f"http://{spelling}:{server.port}/", deny_domains=["evil.com"])
    assert server.requests == []


@pytest.mark.parametrize("spelling", ["%65vil.com", "evil%2ecom", "EVIL.com."])
def test_a_redirect_to_a_denied_domain_is_refused_however_its_host_is_spelled(client, server, spelling):
    server.route("/hop", redirect(f"http://{spelling}:{server.port}/target"))
    server.route("/target", html(ARTICLE))
    with pytest.raises(ToolError, match="the operator has blocked this domain"):
        call(client, server.url("/hop", host="good.example"), deny_domains=["evil.com"])
    assert server.hits("/target") == 0


def test_robots_txt_is_read_for_the_origin_the_page_is_fetched_from(client, server):
    server.route("/robots.txt", Reply(200, {"Content-Type": "text/plain"}, "User-agent: *\nDisallow: /private\n"))
    server.route("*", html(ARTICLE))
    port = server.port
    tool = make_tool()
    ctx, _ = tool_context_for_test(fetch=client)
    assert tool.handler({"url": f"http://ｓｉｔｅ.test:{port}/page"}, ctx)["url"] == f"http://site.test:{port}/page"
    tool.handler({"url": f"http://%73ite.test:{port}/other"}, ctx)
    with pytest.raises(ToolError, match=f"^The robots.txt of http://site.test:{port} does not allow"):
        tool.handler({"url": f"http://SITE.test.:{port}/private"}, ctx)
    robots = [r for r in server.requests if r.path == "/robots.txt"]
    assert [r.headers["Host"] for r in robots] == [f"site.test:{port}"]  # one origin, read once
    assert server.hits("/private") == 0


def test_spellings_of_one_url_share_the_turn_cache_and_are_cited_in_canonical_form(client, server):
    server.route("/a", html(ARTICLE))
    port = server.port
    canonical = f"http://site.test:{port}/a"
    tool = make_tool()
    ctx, cited = tool_context_for_test(fetch=client)
    spellings = (f"http://Site.test:{port}/a", f"http://%73ite.test:{port}/a#part", f"http://site.test.:{port}/./a")
    for spelling in spellings:
        assert tool.handler({"url": spelling}, ctx)["url"] == canonical
    assert server.hits("/a") == 1
    assert [c.url for c in cited] == [canonical]


@pytest.mark.parametrize("url, message", [
    ("http://[::1", r"^The URL's host has an opening \[ without a closing \]\.$"),
    ("http://exa mple.com/", "^The URL's host contains a space"),
    ("http://example.com:99999/", "^The URL's port 99999 is outside 1-65535"),
    ("http://example.com\tx/", "^The URL contains a control character"),
])
def test_a_malformed_url_gets_its_own_clear_message_not_a_robots_txt_one(client, server, url, message):
    with pytest.raises(ToolError, match=message):
        call(client, url)
    assert server.requests == []


def test_a_malformed_url_is_a_tool_error_through_a_turn_not_an_unexpected_failure(client):
    registry = Registry()
    plugin = WebFetchPlugin()
    plugin.setup(PluginSetup("web_fetch", plugin.default_options(), registry, Ingesters()))
    with Turn(registry=registry, fetch=client) as turn:
        result = turn.call("web_fetch", {"url": "http://[::1"})
    assert result.is_error
    assert result.output == {"error": "The URL's host has an opening [ without a closing ].",
                             "error_code": "invalid_tool_input"}


@pytest.mark.parametrize("location, reason", [
    ("gopher://127.0.0.1:70/x", "Only http and https URLs can be fetched, not gopher: URLs."),
    ("http://[::1/x", "The URL's host has an opening [ without a closing ]."),
    ("http://evil.com\\@example.com/", "The URL has a backslash before its path"),
])
def test_a_redirect_that_cannot_be_followed_says_why_not_robots_txt(client, server, location, reason):
    server.route("/hop", Reply(302, {"Location": location, "Content-Length": "0"}, b""))
    with pytest.raises(ToolError) as refused:
        call(client, server.url("/hop"))
    assert refused.value.message.startswith(
        f"{server.url('/hop')} redirects to an address that cannot be followed: {reason}"
    )
    assert [r.path for r in server.requests] == ["/robots.txt", "/hop"]


# -- robots.txt ------------------------------------------------------------------------------------


def test_robots_txt_allowing_the_page(client, server):
    server.route("/robots.txt", Reply(200, {"Content-Type": "text/plain"},
                                      "User-agent: *\nDisallow: /private\n"))
    server.route("/public", html(ARTICLE))
    assert call(client, server.url("/public"))["content"]


def test_robots_txt_denying_the_page_is_refused_and_says_so(client, server):
    server.route("/robots.txt", Reply(200, {"Content-Type": "text/plain"},
                                      "User-agent: webtools\nDisallow: /private\n"))
    server.route("/private/page", html(ARTICLE))
    with pytest.raises(ToolError, match="robots.txt"):
        call(client, server.url("/private/page"))
    assert server.hits("/private/page") == 0


def test_robots_txt_is_ignored_when_the_option_is_off(client, server):
    server.route("/robots.txt", Reply(200, {}, "User-agent: *\nDisallow: /\n"))
    server.route("/", html(ARTICLE))
    assert call(client, server.url("/"), respect_robots_txt=False, respect_content_signals=False)["content"]
    assert server.hits("/robots.txt") == 0


def test_with_robots_txt_off_its_content_signals_are_still_read_and_its_rules_are_not(client, server):
    server.route("/robots.txt", Reply(200, {}, "User-agent: *\nDisallow: /\n"))
    server.route("/", html(ARTICLE))
    assert call(client, server.url("/"), respect_robots_txt=False)["content"]
    assert server.hits("/robots.txt") == 1


def test_robots_txt_server_error_disallows_everything_and_says_it_could_not_be_read(client, server):
    server.route("/robots.txt", Reply(503, {}, "busy"))
    server.route("/", html(ARTICLE))
    with pytest.raises(ToolError) as refused:
        call(client, server.url("/"))
    assert refused.value.message == (
        f"The robots.txt of {server.origin} could not be read (its server answered HTTP 503). A robots.txt "
        f"that cannot be read counts as disallowing every page (RFC 9309), so {server.url('/')} was not "
        "fetched; it may be readable later.")
    assert server.hits("/") == 0


def test_robots_txt_redirecting_to_a_server_that_cannot_be_reached_could_not_be_read(client, server):
    import socket

    with socket.socket() as spare:  # a port nothing listens on once closed
        spare.bind(("127.0.0.1", 0))
        closed_port = spare.getsockname()[1]
    server.route("/robots.txt", redirect(f"http://127.0.0.1:{closed_port}/robots.txt"))
    server.route("/", html(ARTICLE))
    with pytest.raises(ToolError) as refused:
        call(client, server.url("/"))
    assert refused.value.message.startswith(
        f"The robots.txt of {server.origin} could not be read (it redirects to http://127.0.0.1:{closed_port}, "
        "which could not be reached).")


# -- a site that cannot be reached: what happened, never robots.txt -------------------------------------


def _unreachable(client, url, **options):
    with pytest.raises(ToolError) as failed:
        call(client, url, **options)
    assert "robots" not in failed.value.message.lower()
    return failed.value.message


@pytest.mark.parametrize("respect_robots_txt", [True, False])
def test_a_name_that_does_not_resolve_says_the_host_has_no_address(respect_robots_txt):
    import socket

    def resolver(host, port):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"]), resolver=resolver) as client:
        message = _unreachable(client, "https://nonexistent.invalid/page", respect_robots_txt=respect_robots_txt)
    assert message == "The host nonexistent.invalid could not be found: no address is registered for that name."


@pytest.mark.parametrize("respect_robots_txt", [True, False])
def test_a_refused_port_says_the_connection_was_refused(client, server, respect_robots_txt):
    url, port = server.url("/page"), server.port
    server.stop()
    message = _unreachable(client, url, respect_robots_txt=respect_robots_txt)
    assert message == f"127.0.0.1:{port} refused the connection: nothing accepts connections on that port."


@pytest.mark.parametrize("respect_robots_txt", [True, False])
def test_a_certificate_that_cannot_be_verified_is_a_tls_failure(client, tmp_path, respect_robots_txt):
    from tests.servers import make_tls_context

    context, _ca = make_tls_context(tmp_path, ["site.test"])  # a CA the client does not trust
    with LoopbackServer({"*": html(ARTICLE)}, tls=context) as tls_server:
        url = tls_server.url("/page", host="site.test")
        message = _unreachable(client, url, respect_robots_txt=respect_robots_txt)
    assert message.startswith(f"The TLS connection to {url} failed (the certificate could not be verified")
    assert tls_server.hits() == 0  # no request was made over it


def test_missing_robots_txt_allows_everything(client, server):
    server.route("/", html(ARTICLE))  # /robots.txt answers 404
    assert call(client, server.url("/"))["content"]


def test_robots_txt_is_checked_on_every_redirect_hop(client, server):
    server.route("/robots.txt", Reply(200, {}, "User-agent: *\nDisallow: /blocked\n"))
    server.route("/go", redirect("/blocked"))
    server.route("/blocked", html(ARTICLE))
    with pytest.raises(ToolError, match="robots.txt"):
        call(client, server.url("/go"))
    assert server.hits("/blocked") == 0


def test_robots_txt_is_fetched_once_per_site_in_a_turn(client, server):
    server.route("/robots.txt", Reply(200, {}, "User-agent: *\nAllow: /\n"))
    server.route("*", html(ARTICLE))
    tool = make_tool()
    ctx, _ = tool_context_for_test(fetch=client)
    tool.handler({"url": server.url("/a")}, ctx)
    tool.handler({"url": server.url("/b")}, ctx)
    assert server.hits("/robots.txt") == 1


# -- parts and the turn cache ----------------------------------------------------------------------


def test_text_over_max_characters_comes_in_parts_and_the_last_part_has_no_next_offset(client, server):
    lines = [f"Line {i:04d} of the long document, with some words to fill it." for i in range(60)]
    text = "\n".join(lines)
    server.route("/long.txt", Reply(200, {"Content-Type": "text/plain"}, text))
    tool = make_tool(max_characters=1000)
    ctx, _ = tool_context_for_test(fetch=client)
    parts, offset = [], 0
    while True:
        out = tool.handler({"url": server.url("/long.txt"), "offset": offset}, ctx)
        assert out["offset"] == offset and out["totalCharacters"] == len(text)
        assert len(out["content"]) <= 1000
        parts.append(out["content"])
        if "nextOffset" not in out:
            break
        assert out["content"].endswith("\n")  # cut at a line break in the part's second half
        offset = out["nextOffset"]
    assert "".join(parts) == text and len(parts) > 2


def test_a_second_call_for_the_same_url_in_a_turn_is_served_from_the_turn_cache(client, server):
    server.route("/long.txt", Reply(200, {"Content-Type": "text/plain"}, "word " * 500))
    tool = make_tool(max_characters=1000)
    ctx, _ = tool_context_for_test(fetch=client)
    first = tool.handler({"url": server.url("/long.txt")}, ctx)
    tool.handler({"url": server.url("/long.txt"), "offset": first["nextOffset"]}, ctx)
    assert server.hits("/long.txt") == 1
    next_turn, _ = tool_context_for_test(fetch=client)  # a new turn has a new cache
    tool.handler({"url": server.url("/long.txt")}, next_turn)
    assert server.hits("/long.txt") == 2


def test_an_offset_past_the_end_is_a_tool_error_giving_the_total(client, server):
    server.route("/", Reply(200, {"Content-Type": "text/plain"}, "short text"))
    with pytest.raises(ToolError, match="10 characters"):
        call(client, server.url("/"), offset=50)


def test_page_bodies_over_max_bytes_stop_reading(client, server):
    sent = []

    def body():
        yield b"<html><body><p>" + b"start " * 100
        for _ in range(1000):
            sent.append(1)
            yield b"filler " * 10_000
        yield b"THE_END</p></body></html>"

    server.route("/big", Reply(200, {"Content-Type": "text/html"}, body()))
    out = call(client, server.url("/big"), max_bytes=20_000)
    assert out["content"].startswith("start") and "THE_END" not in out["content"]
    assert out["totalCharacters"] <= 20_000
    assert len(sent) < 100


# -- files -----------------------------------------------------------------------------------------


def _pdf_ingesters() -> Ingesters:
    ingesters = Ingesters()
    ingesters.register(PdfIngester())
    return ingesters


def test_a_pdf_is_fetched_and_returned_as_the_ingesters_text(client, server):
    pdf = make_pdf(["Quarterly report: revenue grew", "Second page says thanks"])
    server.route("/files/report.pdf", Reply(200, {"Content-Type": "application/pdf"}, pdf))
    out = call(client, server.url("/files/report.pdf"), ingesters=_pdf_ingesters())
    assert "Quarterly report: revenue grew" in out["content"]
    assert "Second page says thanks" in out["content"]
    assert out["title"] == "report.pdf"


def test_a_file_type_no_ingester_accepts_is_refused_before_its_body_is_read(client, server):
    server.route("/files/report.pdf", Reply(200, {"Content-Type": "application/pdf"}, make_pdf(["x"])))
    with pytest.raises(ToolError, match="application/pdf"):
        call(client, server.url("/files/report.pdf"))  # no ingesters registered


def test_a_file_over_max_file_bytes_is_refused(client, server):
    pdf = make_pdf(["big"]) + b"%" + b"x" * 30_000
    server.route("/big.pdf", Reply(200, {"Content-Type": "application/pdf"}, pdf))
    with pytest.raises(ToolError, match="larger than 10000 bytes"):
        call(client, server.url("/big.pdf"), ingesters=_pdf_ingesters(), max_file_bytes=10_000)


# -- the runtime around it -------------------------------------------------------------------------


def test_output_is_wrapped_as_untrusted_and_cited_through_a_turn(client, server):
    server.route("/", html(ARTICLE))
    registry = Registry()
    plugin = WebFetchPlugin()
    plugin.setup(PluginSetup("web_fetch", plugin.default_options(), registry, Ingesters()))
    with Turn(registry=registry, fetch=client, messages=[f"What does {server.url('/')} say?"]) as turn:
        result = turn.call("web_fetch", {"url": server.url("/")})
    assert not result.is_error
    assert result.model_text.startswith("<untrusted_tool_output id=")
    assert [c.url for c in result.citations] == [server.url("/")]


def test_calls_in_parallel_threads_share_nothing_but_the_turn_cache(client, server):
    server.route("*", html(ARTICLE))
    tool = make_tool()
    ctx, _ = tool_context_for_test(fetch=client)
    errors = []

    def run(path):
        try:
            tool.handler({"url": server.url(path)}, ctx)
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(f"/p{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@needs(CORPUS)
def test_a_real_corpus_page_end_to_end(client, server):
    folder = CORPUS / "wikipedia"
    meta = json.loads((folder / "expected-metadata.json").read_text())
    server.route("/wiki/page", html((folder / "source.html").read_bytes()))
    out = call(client, server.url("/wiki/page"))
    assert out["title"] == meta["title"]
    assert out["totalCharacters"] > 5000 and "nextOffset" in out
    assert "<script" not in out["content"]
