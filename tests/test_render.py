"""Pages that need JavaScript: the guarding proxy, and the renderer whose every packet passes it.

The proxy is tested on its own with raw sockets; the renderer in the real Debian Chromium through
Playwright, in both isolation modes, against a page that tries every way out a browser has, aimed at
tripwires (TCP on 127.0.0.2, UDP on 127.0.0.1 and 127.0.0.2) that must see nothing. The test site on
127.0.0.1 is allowed by an address-policy override; 127.0.0.2 is loopback and stays refused.
"""
from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from tests.servers import LoopbackServer, Reply, redirect
from tests.test_web_fetch import _resolver, make_tool
from webtools.net import AddressPolicy, HttpClient
from webtools.net.proxy import GuardingProxy, ProxyRules, is_background_host
from webtools.plugins.web_fetch import render
from webtools.plugins.web_fetch.render import needs_javascript
from webtools.runtime import ToolError

SCRIPT_BUILT = """<html><head><title>Tide tables</title></head><body><div id="root"></div>
<noscript>You need to enable JavaScript to run this app.</noscript>
<script>
document.getElementById('root').innerHTML = '<article><h1>Tide tables</h1><p>' +
  'High water at the harbour mouth comes forty minutes after the pier, and the spring tides of this ' +
  'month reach five metres and ten centimetres on the third and the fourth.</p></article>';
</script></body></html>"""

STATIC = """<html><head><title>Static</title></head><body><article><h1>Static page</h1><p>
This page has its whole text in the HTML, as most pages do, so it never needs a browser at all: the
static reading finds every word of it, and rendering it would only cost time and memory. It is long
enough that the automatic mode leaves it alone, because four hundred characters of text is more than
a script-built page's empty shell ever shows before its scripts run.</p></article>
<script>var analytics = 1;</script></body></html>"""


@pytest.fixture(scope="module")
def client():
    """One client for the module: the renderer is shared per address policy, so one policy, one browser."""
    with HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"]), resolver=_resolver) as c:
        yield c


@pytest.fixture
def server():
    with LoopbackServer() as s:
        yield s


# -- the proxy -------------------------------------------------------------------------------------


def _ask(proxy: GuardingProxy, request: bytes) -> bytes:
    host, port = proxy.address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.fixture
def proxy(client):
    with GuardingProxy(client.clone(), ProxyRules(max_bytes=100_000, timeout=10)) as p:
        yield p


def test_proxy_forwards_an_absolute_form_request_to_an_allowed_address(proxy, server):
    server.route("/page", Reply(200, {"Content-Type": "text/plain"}, b"hello through the proxy"))
    answer = _ask(proxy, f"GET {server.url('/page')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert answer.endswith(b"hello through the proxy")
    assert b"Connection: close" in answer
    assert server.hits("/page") == 1


def test_proxy_refuses_a_private_address_and_records_it(proxy):
    answer = _ask(proxy, b"GET http://127.0.0.2:8080/ HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403 ")
    assert b"loopback" in answer
    assert [(e.allowed, e.target) for e in proxy.rules.events] == [(False, "http://127.0.0.2:8080/")]


def test_proxy_connect_only_to_ports_80_and_443(proxy):
    answer = _ask(proxy, b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403 ")
    assert b"port 22" in answer


def test_proxy_connect_to_a_private_address_is_refused(client):
    with GuardingProxy(HttpClient(), ProxyRules(timeout=5)) as p:  # the real policy
        answer = _ask(p, b"CONNECT 169.254.169.254:443 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403 ")
    assert b"metadata" in answer or b"link-local" in answer


def test_proxy_connect_tunnels_bytes_to_an_allowed_address(client):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    rules = ProxyRules(timeout=5, connect_ports=frozenset({port}))
    with GuardingProxy(client.clone(), rules) as p, listener:
        host, pport = p.address.rsplit(":", 1)
        with socket.create_connection((host, int(pport)), timeout=5) as sock:
            sock.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            assert sock.recv(100).startswith(b"HTTP/1.1 200 ")
            upstream, _ = listener.accept()
            with upstream:
                sock.sendall(b"ping")
                assert upstream.recv(10) == b"ping"
                upstream.sendall(b"pong")
                assert sock.recv(10) == b"pong"


def test_proxy_refuses_browser_background_traffic(proxy):
    answer = _ask(proxy, b"CONNECT update.googleapis.com:443 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403 ")
    assert is_background_host("clients2.google.com") and not is_background_host("example.com")


def test_proxy_refuses_origin_form_requests_and_websocket_upgrades_over_plain_http(proxy, server):
    assert _ask(proxy, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    upgrade = f"GET {server.url('/ws')} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
    assert _ask(proxy, upgrade.encode()).startswith(b"HTTP/1.1 403 ")
    assert server.hits() == 0


def test_proxy_byte_limit_holds(proxy, server):
    server.route("/big", Reply(200, {"Content-Type": "text/plain"}, b"x" * 200_000))
    answer = _ask(proxy, f"GET {server.url('/big')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 502 ")
    assert len(answer) < 1000


# -- when to render --------------------------------------------------------------------------------


@pytest.mark.parametrize("html", [
    '<div id="root"></div><script src="/app.js"></script>',
    '<div id="__next"></div><script id="__NEXT_DATA__" type="application/json">{}</script>',
    '<body><noscript>Please enable JavaScript.</noscript><script src="/a.js"></script></body>',
    '<app-root></app-root><script src="main.js"></script>',
])
def test_auto_renders_a_page_with_little_text_and_the_marks_of_a_script_built_page(html):
    assert needs_javascript(html, "")


def test_auto_leaves_pages_with_text_or_without_scripts_alone():
    assert not needs_javascript(STATIC, "word " * 200)
    assert not needs_javascript('<div id="root"></div>', "")  # no script: nothing to run
    assert not needs_javascript("<p>Short note.</p><script>x()</script>", "Short note.")


# -- the renderer ----------------------------------------------------------------------------------


def _require_chromium():
    if not os.access(render.DEFAULT_EXECUTABLE, os.X_OK):
        if os.environ.get("WEBTOOLS_REQUIRE_BROWSER"):
            pytest.fail(f"WEBTOOLS_REQUIRE_BROWSER is set but {render.DEFAULT_EXECUTABLE} is missing.")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    if not render.namespaces_available():
        pytest.fail("the renderer's tests run as root on Linux, where network namespaces are available")


@pytest.fixture(scope="module", params=["netns", "flags"])
def renderer(request, client):
    _require_chromium()
    r = render.renderer_for(client, isolation=request.param)
    yield r
    render.close_all()


class Tripwires:
    """A TCP listener on 127.0.0.2 and UDP sockets on 127.0.0.1 and 127.0.0.2 that record anything."""

    def __init__(self):
        self.hits: list[str] = []
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.2", 0))
        self.tcp.listen(16)
        self.tcp_port = self.tcp.getsockname()[1]
        self.udp = []
        for host in ("127.0.0.1", "127.0.0.2"):
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind((host, 0))
            self.udp.append(sock)
        self.udp_ports = [s.getsockname()[1] for s in self.udp]
        self._stop = False
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads += [threading.Thread(target=self._receive, args=(s,), daemon=True) for s in self.udp]
        for thread in self._threads:
            thread.start()

    def _accept(self):
        self.tcp.settimeout(0.2)
        while not self._stop:
            try:
                conn, peer = self.tcp.accept()
            except OSError:
                continue
            self.hits.append(f"tcp from {peer}")
            conn.close()

    def _receive(self, sock):
        sock.settimeout(0.2)
        while not self._stop:
            try:
                _, peer = sock.recvfrom(2048)
            except OSError:
                continue
            self.hits.append(f"udp {sock.getsockname()} from {peer}")

    def close(self):
        self._stop = True
        for thread in self._threads:
            thread.join(2)
        for sock in [self.tcp, *self.udp]:
            sock.close()


def vectors_page(trip: str, udp1: int, udp2: int) -> str:
    """Every way out a page has, aimed at the tripwires (and at link-local metadata)."""
    return f"""<html><head><title>Vectors</title>
<link rel="stylesheet" href="http://{trip}/css"><link rel="prefetch" href="http://{trip}/prefetch">
<link rel="preconnect" href="http://{trip}"><link rel="dns-prefetch" href="//{trip}">
<style>body {{ background: url(http://{trip}/bg) }} @import url(http://{trip}/import);
@font-face {{ font-family: f; src: url(http://{trip}/font) }}</style>
<meta http-equiv="refresh" content="5;url=http://{trip}/refresh-late">
</head><body><p id="mark">not yet</p>
<img src="http://{trip}/img"><img src="http://169.254.169.254/latest/meta-data/">
<video src="http://{trip}/video"></video><audio src="http://{trip}/audio"></audio>
<object data="http://{trip}/object"></object><embed src="http://{trip}/embed">
<iframe src="http://{trip}/frame"></iframe>
<iframe srcdoc="<meta http-equiv=refresh content='0;url=http://{trip}/refresh'>"></iframe>
<form id="f" action="http://{trip}/form" method="post" target="sink"><input name="a" value="b"></form>
<iframe name="sink"></iframe>
<script src="http://{trip}/script"></script>
<script>
const T = "{trip}";
const go = (f) => {{ try {{ const p = f(); if (p && p.catch) p.catch(() => {{}}); }} catch (e) {{}} }};
go(() => fetch("http://" + T + "/fetch"));
go(() => fetch("https://" + T + "/fetch-tls"));
go(() => fetch("http://169.254.169.254/latest/meta-data/"));
go(() => fetch("/redirect-to-trip"));
go(() => {{ const x = new XMLHttpRequest(); x.open("GET", "http://" + T + "/xhr"); x.send(); }});
go(() => new WebSocket("ws://" + T + "/ws"));
go(() => new WebSocket("wss://" + T + "/wss"));
go(() => new EventSource("http://" + T + "/es"));
go(() => navigator.sendBeacon("http://" + T + "/beacon", "x"));
go(() => new Worker(URL.createObjectURL(new Blob(["fetch('http://" + T + "/worker').catch(()=>{{}})"]))));
go(() => new SharedWorker(URL.createObjectURL(new Blob(["fetch('http://" + T + "/shared').catch(()=>{{}})"]))));
go(() => navigator.serviceWorker.register("/sw.js"));
go(() => new WebTransport("https://" + T + "/wt").ready);
go(() => document.getElementById("f").submit());
go(() => window.open("http://" + T + "/popup"));
const ice = [{{urls: "stun:127.0.0.1:{udp1}"}}, {{urls: "stun:127.0.0.2:{udp2}"}},
  {{urls: "turn:127.0.0.2:{udp2}?transport=udp", username: "u", credential: "p"}}];
go(async () => {{
  const a = new RTCPeerConnection({{iceServers: ice}}), b = new RTCPeerConnection();
  a.createDataChannel("d");
  await a.setLocalDescription(await a.createOffer());
  await b.setRemoteDescription(a.localDescription);
  await b.setLocalDescription(await b.createAnswer());
  await a.setRemoteDescription(b.localDescription);
  for (const [host, port] of [["127.0.0.1", {udp1}], ["127.0.0.2", {udp2}]]) {{
    await a.addIceCandidate({{candidate: `candidate:1 1 udp 2122260223 ${{host}} ${{port}} typ host`,
                              sdpMid: "0", sdpMLineIndex: 0}});
  }}
}});
document.getElementById("mark").textContent = "Every vector was tried by the page script.";
</script></body></html>"""


def _call(client, url, **options):
    from webtools.testing import tool_context_for_test

    ctx, cited = tool_context_for_test(fetch=client)
    return make_tool(**options).handler({"url": url}, ctx)


def test_a_script_built_page_comes_back_rendered(renderer, client, server):
    server.route("/app", Reply(200, {"Content-Type": "text/html"}, SCRIPT_BUILT))
    output = _call(client, server.url("/app"), render_javascript="always",
                   render_isolation=renderer.mode, respect_robots_txt=False)
    assert output["rendered"] is True
    assert "spring tides of this month reach five metres" in output["content"]


def test_auto_renders_only_the_page_that_needs_it(renderer, client, server):
    server.route("/app", Reply(200, {"Content-Type": "text/html"}, SCRIPT_BUILT))
    server.route("/static", Reply(200, {"Content-Type": "text/html"}, STATIC))
    options = dict(render_javascript="auto", render_isolation=renderer.mode, respect_robots_txt=False)
    assert _call(client, server.url("/app"), **options)["rendered"] is True
    static = _call(client, server.url("/static"), **options)
    assert static["rendered"] is False
    assert "never needs a browser" in static["content"]


def test_never_returns_the_static_shell(client, server):
    server.route("/app", Reply(200, {"Content-Type": "text/html"}, SCRIPT_BUILT))
    output = _call(client, server.url("/app"), respect_robots_txt=False)
    assert "rendered" not in output
    assert "spring tides" not in output["content"]


def test_a_main_frame_navigation_to_a_denied_domain_is_refused(renderer, client, server):
    server.route("/leave", Reply(200, {"Content-Type": "text/html"},
                                 '<div id="root"></div><script>location.href = "http://denied.example/x"</script>'))
    with pytest.raises(ToolError, match="denied.example"):
        _call(client, server.url("/leave"), render_javascript="always", render_isolation=renderer.mode,
              respect_robots_txt=False, deny_domains="denied.example")


def test_no_vector_of_a_page_reaches_a_tripwire(renderer, client, server):
    wires = Tripwires()
    try:
        trip = f"127.0.0.2:{wires.tcp_port}"
        server.route("/vectors", Reply(200, {"Content-Type": "text/html"},
                                       vectors_page(trip, *wires.udp_ports)))
        server.route("/redirect-to-trip", redirect(f"http://{trip}/redirected"))
        server.route("/sw.js", Reply(200, {"Content-Type": "text/javascript"}, f"fetch('http://{trip}/sw')"))
        rendered = renderer.render(server.url("/vectors"), timeout=10)
        assert "Every vector was tried" in rendered.html  # the script ran to its end
        time.sleep(1.0)  # stray packets of ICE checks and retries
        assert wires.hits == []
        refused = {e.target for e in renderer.proxy.rules.events if not e.allowed}
        assert any("169.254.169.254" in target for target in refused)
        assert any(f"{trip}" in target for target in refused)
    finally:
        wires.close()


def test_the_warm_pool_stays_under_its_memory_cap(renderer, server):
    server.route("/app", Reply(200, {"Content-Type": "text/html"}, SCRIPT_BUILT))
    for _ in range(3):
        renderer.render(server.url("/app"), timeout=10)
    assert 0 < renderer.memory_bytes() < renderer.memory_cap


# -- the operator's side ---------------------------------------------------------------------------


@pytest.fixture
def fetch_plugin(use_plugins):
    from webtools.plugins.web_fetch import WebFetchPlugin

    return use_plugins(WebFetchPlugin())


@pytest.mark.django_db
def test_system_check_warns_when_rendering_needs_namespaces_the_host_lacks(fetch_plugin, monkeypatch):
    from webtools import checks
    from webtools.models import PluginOptions

    PluginOptions.objects.create(plugin="web_fetch", values={"render_javascript": "auto"})
    monkeypatch.setattr(render, "namespaces_available", lambda: False)
    warnings = checks.check_plugin_environment(databases=["default"])
    assert [w.id for w in warnings] == ["webtools.W015"]
    assert "flags-only" in warnings[0].msg
    PluginOptions.objects.filter(plugin="web_fetch").update(
        values={"render_javascript": "auto", "render_isolation": "flags"})
    assert checks.check_plugin_environment(databases=["default"]) == []


def test_the_renderer_refuses_to_start_without_namespaces_unless_flags_only_is_chosen(client, monkeypatch):
    monkeypatch.setattr(render, "namespaces_available", lambda: False)
    with pytest.raises(render.RendererUnavailable, match="flags-only"):
        render.Renderer(client.clone(), mode="netns")


@pytest.mark.django_db
def test_the_admin_test_page_shows_a_rendered_fetch(renderer, fetch_plugin, server, settings, client):
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from webtools.models import PluginOptions

    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_PRIVATE_NETWORKS": True}
    server.route("/app", Reply(200, {"Content-Type": "text/html"}, SCRIPT_BUILT))
    row = PluginOptions.objects.create(plugin="web_fetch", values={
        "render_javascript": "always", "render_isolation": renderer.mode, "respect_robots_txt": False,
        "only_conversation_urls": False,
    })
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("root", password="pw-root-123"))
    url = reverse("admin:webtools_pluginoptions_test", args=[row.pk])
    page = admin.post(url, {"tool": "web_fetch", "input": f'{{"url": "{server.url("/app")}"}}'}).content.decode()
    assert "spring tides of this month reach five metres" in page
    assert "&quot;rendered&quot;: true" in page or '"rendered": true' in page


def test_the_browser_reaches_pages_through_the_outbound_proxy_by_checked_address(server):
    # WEBTOOLS["PROXIES"]["fetch"]: the guarding proxy's own requests go through the operator's proxy,
    # each asked for the address the guard checked, never the name.
    from tests.proxies import HttpProxy

    _require_chromium()
    server.route("/app", Reply(200, {"Content-Type": "text/html"}, SCRIPT_BUILT))
    with HttpProxy() as outbound:
        proxied = HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"]), resolver=_resolver,
                             proxy=outbound.url())
        try:
            output = _call(proxied, server.url("/app", host="tides.test"), render_javascript="always",
                           render_isolation="flags", respect_robots_txt=False, respect_content_signals=False)
        finally:
            render.renderer_for(proxied, isolation="flags").close()
    assert output["rendered"] is True and "spring tides of this month" in output["content"]
    # The static download, then the browser's own request for the page.
    assert outbound.log[:2] == [f"GET http://127.0.0.1:{server.port}/app"] * 2
    assert all(entry.startswith(f"GET http://127.0.0.1:{server.port}/") for entry in outbound.log)
    assert {headers["host"] for headers in outbound.headers} == {f"tides.test:{server.port}"}
