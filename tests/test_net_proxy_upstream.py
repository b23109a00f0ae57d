"""Outbound proxies, with logging proxies and real servers on loopback.

As in test_net_client.py, 127.0.0.1 stands in for the public web (``PUBLIC`` allows it by an override
row) and fake names resolve through an injected resolver: ``public.test`` to 127.0.0.1, ``private.test``
to a private address and ``metadata.test`` to the cloud metadata address. The proxies log what they
are asked for, so each test shows what reached the proxy, and that a refused target never did.
"""
from __future__ import annotations

import logging
import socket

import pytest

from tests.proxies import HttpProxy, Socks5Proxy
from tests.servers import LoopbackServer, Reply, make_tls_context, redirect
from tests import test_net_client
from webtools.net import AddressNotAllowed, AddressPolicy, ConnectionFailed, HttpClient, client_for
from webtools.net.proxy_upstream import UpstreamProxy

PUBLIC = AddressPolicy.with_overrides(allow=["127.0.0.1/32"])
OK = Reply(200, {"Content-Type": "text/plain"}, b"reached")
USER, SECRET = "egress", "s3cret-pa55word"
#: The HTTPS server for "public.test" of the client's own tests.
tls_server = test_net_client.tls_server


def resolve(host, port):
    table = {"public.test": ["127.0.0.1"], "private.test": ["10.0.0.7"], "metadata.test": ["169.254.169.254"],
             "mixed.test": ["127.0.0.1", "192.168.1.1"]}
    if host not in table:
        raise OSError(f"unknown test name {host}")
    return table[host]


def echo_host(request):
    return Reply(200, {"Content-Type": "text/plain"}, f"reached {request.headers['Host']}")


@pytest.fixture
def public():
    with LoopbackServer({"*": echo_host}) as server:
        yield server


@pytest.fixture(params=["http", "socks5"])
def proxy(request):
    kind = HttpProxy if request.param == "http" else Socks5Proxy
    with kind(username=USER, password=SECRET) as running:
        yield running


def guarded(proxy, **kwargs):
    return HttpClient(policy=PUBLIC, resolver=resolve, proxy=proxy.url(), **kwargs)


def get(client, url):
    return client.request("GET", url, max_bytes=1 << 20, timeout=5)


# -- the guard stays whole -------------------------------------------------------------------------


def test_an_https_fetch_goes_through_the_proxy_to_the_checked_address_with_the_name_for_tls(proxy, tls_server):
    client = guarded(proxy, ca_certs=tls_server.ca_file)
    assert get(client, tls_server.url("/page", host="public.test")).content == b"reached"
    port = tls_server.port
    assert proxy.log == ([f"CONNECT 127.0.0.1:{port}"] if proxy.scheme == "http" else [f"SOCKS 127.0.0.1:{port}"])
    assert tls_server.sni_names == ["public.test"]  # SNI and the certificate are the name's
    assert proxy.credentials == [(USER, SECRET)]


def test_an_https_certificate_for_another_name_is_refused_through_the_proxy(proxy, tmp_path):
    context, ca_file = make_tls_context(tmp_path, ["other.test"])
    with LoopbackServer({"*": OK}, tls=context) as server:
        with pytest.raises(ConnectionFailed, match="certificate"):
            get(guarded(proxy, ca_certs=ca_file), server.url("/", host="public.test"))


def test_a_plain_http_fetch_asks_the_proxy_for_the_address_with_the_host_header(proxy, public):
    response = get(guarded(proxy), public.url("/page?q=1", host="public.test"))
    port = public.port
    assert response.content == f"reached public.test:{port}".encode()
    if proxy.scheme == "http":
        assert proxy.log == [f"GET http://127.0.0.1:{port}/page?q=1"]
        assert proxy.headers[0]["host"] == f"public.test:{port}"
    else:
        assert proxy.log == [f"SOCKS 127.0.0.1:{port}"]


@pytest.mark.parametrize("host", ["private.test", "metadata.test", "mixed.test", "10.0.0.7", "169.254.169.254"])
def test_a_target_resolving_to_a_refused_address_never_reaches_the_proxy(proxy, host):
    with pytest.raises(AddressNotAllowed):
        get(guarded(proxy), f"http://{host}/latest/meta-data/")
    with pytest.raises(AddressNotAllowed):
        get(guarded(proxy), f"https://{host}/")
    assert proxy.log == [] and proxy.credentials == []


def test_a_redirect_to_a_refused_address_stops_before_the_proxy_hears_of_it(proxy, public):
    public.route("/go", redirect("http://metadata.test/latest/meta-data/"))
    client = guarded(proxy)
    with pytest.raises(AddressNotAllowed):
        client.follow("GET", public.url("/go", host="public.test"), timeout=5)
    assert len(proxy.log) == 1 and "metadata" not in proxy.log[0] and "169.254" not in proxy.log[0]


def test_the_guarding_proxys_tunnels_go_through_the_outbound_proxy_to_the_checked_address(proxy, public):
    # What the renderer's guarding proxy asks for a browser's CONNECT.
    client = guarded(proxy)
    with client.connect(public.url("/", host="public.test"), timeout=5) as tunnel:
        tunnel.sendall(b"GET / HTTP/1.1\r\nHost: public.test\r\nConnection: close\r\n\r\n")
        assert b"reached public.test" in _read_all(tunnel)
    expected = f"127.0.0.1:{public.port}"
    assert proxy.log == ([f"CONNECT {expected}"] if proxy.scheme == "http" else [f"SOCKS {expected}"])
    with pytest.raises(AddressNotAllowed):
        client.connect("https://metadata.test/", timeout=5)
    assert len(proxy.log) == 1


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_the_plain_client_asks_its_proxy_by_name(public):
    # The operator's own endpoints (engines, rendering services): the proxy resolves them.
    with HttpProxy(names={"searx.internal": "127.0.0.1"}) as running:
        client = client_for(True, proxy=running.url())
        assert get(client, f"http://searx.internal:{public.port}/search?q=tides").content.startswith(b"reached")
    assert running.log == [f"GET http://searx.internal:{public.port}/search?q=tides"]


def test_an_https_proxy_carries_tls_inside_its_own_tls(tmp_path):
    # One test CA signs both certificates: the proxy's is checked with the client's CA bundle.
    context, ca_file = make_tls_context(tmp_path, ["public.test", "127.0.0.1"])
    with LoopbackServer({"*": OK}, tls=context) as server, \
            HttpProxy(username=USER, password=SECRET, tls=context) as running:
        client = guarded(running, ca_certs=ca_file)
        assert get(client, server.url("/", host="public.test")).content == b"reached"
        with client.connect(server.url("/", host="public.test"), timeout=5):
            pass
        with pytest.raises(AddressNotAllowed):
            get(client, "https://metadata.test/")
    assert running.log == [f"CONNECT 127.0.0.1:{server.port}"] * 2
    assert running.credentials == [(USER, SECRET)] * 2
    # The server's context also served the proxy (asked by IP, so without SNI): the inner TLS named the host.
    assert [name for name in server.sni_names if name] == ["public.test"]


# -- credentials never shown -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", [HttpProxy, Socks5Proxy])
def test_wrong_credentials_fail_without_showing_them(kind, public, caplog):
    caplog.set_level(logging.DEBUG)
    with kind(username=USER, password="right") as running:
        client = HttpClient(policy=PUBLIC, resolver=resolve, proxy=running.url().replace("right", SECRET))
        with pytest.raises(ConnectionFailed) as err:
            get(client, public.url("/", host="public.test"))
        with pytest.raises(ConnectionFailed) as tunnel_err:
            client.connect(public.url("/", host="public.test"), timeout=5)
    shown = [str(err.value), str(tunnel_err.value), repr(client), str(client.proxy), repr(client.proxy),
             caplog.text]
    assert not any(SECRET in text or USER in text for text in shown)


@pytest.mark.parametrize(("url", "problem"), [
    ("ftp://proxy:21", "must start with http://, https:// or socks5://"),
    ("socks4://proxy:1080", "must start with http://, https:// or socks5://"),
    ("http://user:pa55@proxy:3128/path", "no path or query"),
    ("http://user:pa55@:3128", "names no host"),
    ("http://user:pa55@proxy:99999", "cannot be read"),
])
def test_a_proxy_url_that_cannot_be_used_is_refused_without_repeating_it(url, problem):
    with pytest.raises(ValueError) as err:
        UpstreamProxy.read(url)
    assert problem in str(err.value) and "pa55" not in str(err.value)


def test_a_proxy_reads_its_parts_and_shows_none_of_its_credentials():
    proxy = UpstreamProxy.read("socks5://us%40er:p%3Ass@10.1.2.3")
    assert (proxy.scheme, proxy.host, proxy.port, proxy.username, proxy.password) == (
        "socks5", "10.1.2.3", 1080, "us@er", "p:ss")
    assert str(proxy) == "socks5://10.1.2.3:1080" and "p:ss" not in repr(proxy)
    assert UpstreamProxy.read("http://proxy.corp").port == 8080


# -- the settings --------------------------------------------------------------------------------------


def test_the_settings_give_the_fetch_proxy_to_the_guarded_client_and_the_engines_proxy_to_the_plain(settings):
    from webtools.host import http_clients

    settings.WEBTOOLS = {**settings.WEBTOOLS, "PROXIES": {"fetch": f"http://{USER}:{SECRET}@egress.corp:3128",
                                                          "engines": "socks5://10.0.0.9"}}
    guarded_client, plain_client = http_clients("webtools")
    assert str(guarded_client.proxy) == "http://egress.corp:3128" and guarded_client.policy is not None
    assert str(plain_client.proxy) == "socks5://10.0.0.9:1080" and plain_client.policy is None
    assert SECRET not in repr(guarded_client)
    settings.WEBTOOLS = {**settings.WEBTOOLS, "PROXIES": {}}
    assert [client.proxy for client in http_clients("webtools")] == [None, None]


def test_a_search_goes_through_the_engines_proxy(settings):
    from tests.test_web_search import EngineServer, options
    from tests.test_web_search_limits import search
    from webtools.host import http_clients
    from webtools.plugins.web_search.engines import ENGINES
    from webtools.runtime.limits import MemoryStore

    engines = EngineServer()
    engines.record("brave")
    with Socks5Proxy(username=USER, password=SECRET) as running:
        settings.WEBTOOLS = {**settings.WEBTOOLS, "PROXIES": {"engines": running.url()},
                             "ENGINE_URLS": {e.id: f"{engines.base}/{e.id}" for e in ENGINES}}
        _guarded, plain_client = http_clients("webtools")
        output = search(options(), http=plain_client, store=MemoryStore())
    engines.close()
    assert output["engine"] == "brave" and output["results"]
    assert running.log == [f"SOCKS 127.0.0.1:{engines.loopback.port}"]


@pytest.mark.parametrize(("proxies", "problem"), [
    ("http://proxy:3128", 'WEBTOOLS["PROXIES"] must be a dict.'),
    ({"pages": "http://proxy:3128"}, "unknown key 'pages'"),
    ({"fetch": f"gopher://{USER}:{SECRET}@proxy"}, 'WEBTOOLS["PROXIES"]["fetch"]: A proxy URL must start with'),
    ({"engines": f"http://{USER}:{SECRET}@proxy/x"}, 'WEBTOOLS["PROXIES"]["engines"]: A proxy URL is scheme'),
])
def test_the_system_check_names_a_proxy_setting_it_cannot_use_without_its_credentials(settings, proxies, problem):
    from webtools.checks import check_proxies

    settings.WEBTOOLS = {**settings.WEBTOOLS, "PROXIES": proxies}
    errors = check_proxies()
    assert [error.id for error in errors] == ["webtools.E004"]
    assert problem in errors[0].msg and SECRET not in errors[0].msg


def test_the_system_check_passes_usable_proxies(settings):
    from webtools.checks import check_proxies

    settings.WEBTOOLS = {**settings.WEBTOOLS, "PROXIES": {"fetch": "https://u:p@proxy:443", "engines": ""}}
    assert check_proxies() == []
