"""The guarded client against real sockets on loopback.

127.0.0.1 stands in for a public host (``PUBLIC`` allows it by an override row); 127.0.0.2 stands in
for a private one and stays refused. The default policy refuses both, and the plain client
(``policy=None``, what ``ALLOW_PRIVATE_NETWORKS`` gives) reaches both.
"""
from __future__ import annotations

import gzip
import socket
import ssl
import threading
import time
import tracemalloc
import zlib

import pytest

from tests.servers import (
    LoopbackServer,
    Reply,
    brotli_bomb,
    gzip_bomb,
    ipv6_available,
    make_tls_context,
    redirect,
    trickle,
    trickle_headers,
)
from webtools.net import (
    DEFAULT_POLICY,
    AddressNotAllowed,
    AddressPolicy,
    BodyTooLarge,
    Cancelled,
    ConnectionFailed,
    FetchTimeout,
    HttpClient,
    InvalidURL,
    NetError,
    RedirectNotAllowed,
    TooManyRedirects,
    client_for,
)

PUBLIC = AddressPolicy.with_overrides(allow=["127.0.0.1/32"], deny=["127.0.0.2/32"])
OK = Reply(200, {"Content-Type": "text/plain"}, b"reached")


@pytest.fixture
def public():
    """The "public" web: a server on 127.0.0.1 that answers every path."""
    with LoopbackServer({"*": OK}) as server:
        yield server


@pytest.fixture
def private():
    """A "private" service on 127.0.0.2 that nothing guarded may reach."""
    with LoopbackServer({"*": Reply(200, {}, b"secret")}, host="127.0.0.2") as server:
        yield server


def names(mapping):
    """An injected resolver for fake names; anything else is unknown (tests never use real DNS)."""
    def resolve(host, port):
        if host not in mapping:
            raise OSError(f"unknown test name {host}")
        return list(mapping[host])
    return resolve


def fetch(client, url, **kwargs):
    kwargs.setdefault("max_bytes", 1 << 20)
    kwargs.setdefault("timeout", 5)
    return client.request("GET", url, **kwargs)


# --- the loopback server: refused with the guard, reached without it -------------------------------


def test_loopback_server_is_refused_by_default_policy(public):
    with pytest.raises(AddressNotAllowed) as excinfo:
        fetch(HttpClient(), public.url("/"))
    assert "it resolves to a loopback address (127.0.0.1)" in str(excinfo.value)
    assert str(excinfo.value).startswith(f"The address {public.url('/')} is not allowed")
    assert public.hits() == 0


def test_plain_client_reaches_loopback_server(public):
    assert fetch(HttpClient(policy=None), public.url("/")).content == b"reached"


def test_allow_private_networks_gives_the_plain_client(public):
    assert client_for(True).policy is None
    assert fetch(client_for(True), public.url("/")).content == b"reached"
    assert client_for(False).policy is DEFAULT_POLICY
    with pytest.raises(AddressNotAllowed):
        fetch(client_for(False), public.url("/"))
    assert client_for(False, policy=PUBLIC).policy is PUBLIC


NUMERIC_SPELLINGS = ["2130706433", "0x7f.1", "0177.0.0.1", "127.1", "0x7f000001", "127.0.0.1.", "localhost"]


@pytest.mark.parametrize("host", NUMERIC_SPELLINGS)
def test_numeric_spelling_of_loopback_is_refused(public, host):
    with pytest.raises(AddressNotAllowed):
        fetch(HttpClient(), public.url("/", host=host))
    assert public.hits() == 0


@pytest.mark.parametrize("host", NUMERIC_SPELLINGS)
def test_numeric_spelling_of_loopback_is_reached_without_guard(public, host):
    assert fetch(HttpClient(policy=None), public.url("/", host=host)).content == b"reached"


@pytest.mark.parametrize("host", ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]"])
def test_ipv4_mapped_loopback_is_refused(public, host):
    with pytest.raises(AddressNotAllowed) as excinfo:
        fetch(HttpClient(), public.url("/", host=host))
    assert "embedded in an IPv4-mapped IPv6 address" in str(excinfo.value)
    assert public.hits() == 0
    assert fetch(HttpClient(policy=None), public.url("/", host=host)).content == b"reached"


@pytest.mark.skipif(not ipv6_available(), reason="no IPv6 loopback here")
def test_ipv6_loopback_is_refused_and_reached_without_guard():
    with LoopbackServer({"*": OK}, host="::1") as server:
        with pytest.raises(AddressNotAllowed):
            fetch(HttpClient(), server.url("/"))
        assert server.hits() == 0
        assert fetch(HttpClient(policy=None), server.url("/")).content == b"reached"


def test_backslash_userinfo_trick_is_refused_before_any_connection(public):
    # A WHATWG parser and urllib3 send this to 127.0.0.1; urllib.parse says the host is example.com.
    # Checks and socket must read one host, so a URL parsers read differently is not sent at all.
    url = f"http://127.0.0.1:{public.port}\\@example.com/"
    for client in (HttpClient(resolver=names({"example.com": ["93.184.216.34"]})), HttpClient(policy=None)):
        with pytest.raises(InvalidURL, match="backslash"):
            fetch(client, url)
    assert public.hits() == 0


# --- names and the addresses they resolve to ------------------------------------------------------


def test_name_resolving_to_private_address_is_refused():
    client = HttpClient(resolver=names({"intranet.test": ["10.0.0.5"]}))
    with pytest.raises(AddressNotAllowed) as excinfo:
        fetch(client, "http://intranet.test/admin?token=s3cret")
    assert str(excinfo.value) == (
        "The address http://intranet.test/admin is not allowed: "
        "it resolves to a private network address (10.0.0.5)."
    )


def test_name_resolving_to_private_stand_in_is_refused(private):
    client = HttpClient(policy=PUBLIC, resolver=names({"internal.test": ["127.0.0.2"]}))
    with pytest.raises(AddressNotAllowed):
        fetch(client, private.url("/", host="internal.test"))
    assert private.hits() == 0


@pytest.mark.parametrize("order", [["127.0.0.1", "127.0.0.2"], ["127.0.0.2", "127.0.0.1"]])
def test_name_with_one_public_and_one_private_address_is_refused(public, order):
    client = HttpClient(policy=PUBLIC, resolver=names({"mixed.test": order}))
    with pytest.raises(AddressNotAllowed) as excinfo:
        fetch(client, public.url("/", host="mixed.test"))
    assert "(127.0.0.2)" in str(excinfo.value)
    assert public.hits() == 0


def test_public_name_is_reached_through_its_checked_address(public):
    client = HttpClient(policy=PUBLIC, resolver=names({"www.public.test": ["127.0.0.1"]}))
    assert fetch(client, public.url("/page", host="www.public.test")).content == b"reached"
    assert public.requests[0].headers["Host"] == f"www.public.test:{public.port}"


def test_host_is_resolved_once_per_connection_so_rebinding_has_nothing_to_rebind(public):
    answers = iter([["127.0.0.1"], ["127.0.0.2"], ["127.0.0.2"]])
    calls = []

    def rebinding(host, port):
        calls.append(host)
        return next(answers)

    client = HttpClient(policy=PUBLIC, resolver=rebinding)
    assert fetch(client, public.url("/", host="rebind.test")).content == b"reached"
    assert calls == ["rebind.test"]
    # The keep-alive connection to the checked address is reused; the name is not looked up again.
    assert fetch(client, public.url("/again", host="rebind.test")).content == b"reached"
    assert calls == ["rebind.test"]


def test_slow_name_server_does_not_outlast_the_deadline():
    def slow(host, port):
        time.sleep(1.0)
        return ["93.184.216.34"]

    started = time.monotonic()
    with pytest.raises(FetchTimeout):
        fetch(HttpClient(resolver=slow), "http://slow-dns.test/", timeout=0.3)
    assert time.monotonic() - started < 0.9  # the lookup alone takes 1 s


def test_unknown_name_is_a_connection_failure():
    with pytest.raises(ConnectionFailed) as excinfo:
        fetch(HttpClient(resolver=names({})), "http://nowhere.test/")
    assert "could not be found" in str(excinfo.value)


class SpyPolicy(AddressPolicy):
    """PUBLIC, recording every address judged; ``refuse_after`` turns the n-th verdict into a refusal
    (as if the socket had landed somewhere other than the address that was checked)."""

    def __init__(self, refuse_after=None):
        super().__init__(PUBLIC.rules)
        self.seen = []
        self.refuse_after = refuse_after

    def verdict(self, ip, host=None):
        self.seen.append(str(ip))
        if self.refuse_after is not None and len(self.seen) > self.refuse_after:
            return super().verdict("127.0.0.2", host)
        return super().verdict(ip, host)


def test_connected_peer_is_checked_before_a_byte_is_sent(public):
    policy = SpyPolicy(refuse_after=1)
    with pytest.raises(AddressNotAllowed) as excinfo:
        fetch(HttpClient(policy=policy), public.url("/"))
    assert policy.seen == ["127.0.0.1", "127.0.0.1"]  # the resolved address, then the peer
    assert "is connected to" in str(excinfo.value)
    assert public.hits() == 0


def test_reused_keep_alive_connection_is_checked_again(public):
    policy = SpyPolicy()
    client = HttpClient(policy=policy)
    fetch(client, public.url("/one"))
    fetch(client, public.url("/two"))
    assert len({r.client for r in public.requests}) == 1  # one connection, reused
    assert policy.seen == ["127.0.0.1", "127.0.0.1", "127.0.0.1"]  # resolve, peer; peer on reuse


# --- redirects ------------------------------------------------------------------------------------


def test_redirect_is_refused_unless_asked_for(public):
    public.route("/moved", redirect("/new"))
    client = HttpClient(policy=PUBLIC)
    with pytest.raises(RedirectNotAllowed):
        fetch(client, public.url("/moved"))
    with client.open("GET", public.url("/moved"), redirects="return") as response:
        assert response.status_code == 302
        assert response.is_redirect
        assert response.next_url == public.url("/new")


def test_redirect_to_private_server_is_refused_at_the_hop(public, private):
    public.route("/go", redirect(private.url("/metadata")))
    with pytest.raises(AddressNotAllowed):
        HttpClient(policy=PUBLIC).follow("GET", public.url("/go"), timeout=5)
    assert public.hits("/go") == 1
    assert private.hits() == 0


def test_redirect_to_name_of_private_address_is_refused_at_the_hop(public):
    public.route("/go", redirect("http://metadata.test/latest/"))
    client = HttpClient(policy=PUBLIC, resolver=names({"metadata.test": ["169.254.169.254"]}))
    with pytest.raises(AddressNotAllowed) as excinfo:
        client.follow("GET", public.url("/go"), timeout=5)
    assert "cloud metadata address" in str(excinfo.value)


def test_five_redirects_are_followed(public):
    for i in range(1, 6):
        public.route(f"/r{i}", redirect(f"/r{i + 1}"))
    public.route("/r6", OK)
    with HttpClient(policy=PUBLIC).follow("GET", public.url("/r1"), timeout=5) as response:
        assert response.status_code == 200
        assert response.url == public.url("/r6")
        assert response.read(100) == b"reached"


def test_sixth_redirect_fails(public):
    for i in range(1, 7):
        public.route(f"/r{i}", redirect(f"/r{i + 1}"))
    with pytest.raises(TooManyRedirects):
        HttpClient(policy=PUBLIC).follow("GET", public.url("/r1"), timeout=5)
    assert public.hits("/r7") == 0


def test_redirect_loop_fails(public):
    public.route("/a", redirect("/b"))
    public.route("/b", redirect("/a"))
    with pytest.raises(TooManyRedirects):
        HttpClient(policy=PUBLIC).follow("GET", public.url("/a"), timeout=5)
    assert public.hits() == 6


def test_check_hop_sees_every_url_and_can_refuse_before_connecting(public):
    public.route("/start", redirect("/forbidden"))
    seen = []

    class Refused(Exception):
        pass

    def check_hop(url):
        seen.append(str(url))  # the canonical reading the client then connects to
        if url.path == "/forbidden":
            raise Refused(url)

    with pytest.raises(Refused):
        HttpClient(policy=PUBLIC).follow("GET", public.url("/start"), check_hop=check_hop, timeout=5)
    assert seen == [public.url("/start"), public.url("/forbidden")]
    assert public.hits("/forbidden") == 0


def test_check_hop_sees_the_query_parameters_that_are_sent(public):
    seen = []
    with HttpClient(policy=PUBLIC).follow("GET", public.url("/search"), params={"q": "a b", "n": "1"},
                                          check_hop=lambda url: seen.append(url), timeout=5):
        pass
    assert [str(url) for url in seen] == [public.url("/search?q=a+b&n=1")]
    assert (public.requests[0].path, public.requests[0].query) == ("/search", "q=a+b&n=1")


def test_see_other_turns_post_into_get_and_cross_origin_hop_drops_credentials(public):
    with LoopbackServer({"*": OK}) as other:
        public.route("/form", redirect(other.url("/done"), status=303))
        client = HttpClient(policy=PUBLIC)
        with client.follow("POST", public.url("/form"), data={"a": "1"},
                           headers={"Authorization": "Bearer s3cret"}, timeout=5) as response:
            assert response.status_code == 200
        hop = other.requests[0]
        assert hop.method == "GET" and hop.body == b""
        assert hop.headers["Authorization"] is None
        assert public.requests[0].headers["Authorization"] == "Bearer s3cret"


# --- one deadline, cancel --------------------------------------------------------------------------


def test_trickled_body_is_cut_off_at_the_deadline(public):
    public.route("/slow", trickle(b"x" * 200, delay=0.02))
    started = time.monotonic()
    with pytest.raises(FetchTimeout):
        fetch(HttpClient(policy=PUBLIC), public.url("/slow"), timeout=0.5)
    assert time.monotonic() - started < 1.5


def test_trickled_headers_are_cut_off_at_the_deadline(public):
    public.route("/slow", trickle_headers(delay=0.02))
    started = time.monotonic()
    with pytest.raises(FetchTimeout):
        fetch(HttpClient(policy=PUBLIC), public.url("/slow"), timeout=0.5)
    assert time.monotonic() - started < 1.5


def test_deadline_keeps_running_after_the_headers(public):
    public.route("/slow", trickle(b"abc", delay=0.3))
    with HttpClient(policy=PUBLIC).open("GET", public.url("/slow"), timeout=0.4) as response:
        with pytest.raises(FetchTimeout):
            response.read(100)


def test_cancel_stops_a_slow_body(public):
    public.route("/slow", trickle(b"x" * 500, delay=0.02))
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        fetch(HttpClient(policy=PUBLIC), public.url("/slow"), timeout=10, cancel=cancel)
    assert time.monotonic() - started < 1.0


def test_cancel_already_set_sends_nothing(public):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        fetch(HttpClient(policy=PUBLIC), public.url("/"), cancel=cancel)
    assert public.hits() == 0


# --- byte limits and decompression ----------------------------------------------------------------


def test_gzip_bomb_of_one_gigabyte_stops_at_the_limit_with_memory_near_it(public):
    public.route("/bomb", gzip_bomb(1 << 30))
    limit = 8 << 20
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge):
            fetch(HttpClient(policy=PUBLIC), public.url("/bomb"), max_bytes=limit, timeout=20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * limit, f"peak {peak / 1e6:.1f} MB for a {limit / 1e6:.1f} MB limit"


def test_redirect_body_is_never_read_behind_the_callers_back(public):
    # requests' Session.send reads a whole 3xx body (``resp.content``) when it is told not to follow;
    # the client must not, or a bomb in a redirect would skip the byte limit.
    status, headers, body = gzip_bomb(64 << 20)
    public.route("/moved", Reply(302, {**headers, "Location": "/"}, body))
    tracemalloc.start()
    try:
        with HttpClient(policy=PUBLIC).open("GET", public.url("/moved"), redirects="return") as response:
            assert response.is_redirect
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"peak {peak / 1e6:.1f} MB"


def test_gzip_bomb_truncated_keeps_exactly_the_limit(public):
    public.route("/bomb", gzip_bomb(1 << 30))
    limit = 4 << 20
    tracemalloc.start()
    try:
        response = fetch(HttpClient(policy=PUBLIC), public.url("/bomb"), max_bytes=limit,
                         on_too_large="truncate", timeout=20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.truncated
    assert response.content == bytes(limit)
    assert peak < 3 * limit  # the buffer and the bytes handed back


def test_brotli_bomb_stops_at_the_limit(public):
    public.route("/bomb", brotli_bomb(256 << 20))
    limit = 4 << 20
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge):
            fetch(HttpClient(policy=PUBLIC), public.url("/bomb"), max_bytes=limit, timeout=20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * limit


@pytest.mark.parametrize("coding, compress", [
    ("gzip", gzip.compress),
    ("deflate", zlib.compress),
    ("br", lambda data: __import__("brotli").compress(data)),
])
def test_body_is_decompressed_and_counted_decompressed(public, coding, compress):
    body = b"hello world " * 1000
    public.route("/z", Reply(200, {"Content-Encoding": coding}, compress(body)))
    client = HttpClient(policy=PUBLIC)
    assert fetch(client, public.url("/z"), max_bytes=len(body)).content == body
    with pytest.raises(BodyTooLarge):
        fetch(client, public.url("/z"), max_bytes=len(body) - 1)


def test_accept_encoding_names_only_codings_decoded_under_the_limit(public):
    fetch(HttpClient(policy=PUBLIC), public.url("/"))
    assert public.requests[0].headers["Accept-Encoding"] == "gzip, deflate, br"


def test_body_over_the_limit_is_refused_or_truncated(public):
    public.route("/big", Reply(200, {}, b"a" * 1000))
    client = HttpClient(policy=PUBLIC)
    with pytest.raises(BodyTooLarge) as excinfo:
        fetch(client, public.url("/big"), max_bytes=999)
    assert str(excinfo.value) == f"The response from {public.url('/big')} is larger than 999 bytes."
    response = fetch(client, public.url("/big"), max_bytes=10, on_too_large="truncate")
    assert (response.content, response.truncated) == (b"a" * 10, True)
    response = fetch(client, public.url("/big"), max_bytes=1000)
    assert (len(response.content), response.truncated) == (1000, False)


def test_streamed_body_without_length_is_limited(public):
    public.route("/stream", Reply(200, {}, (b"x" * 1024 for _ in range(10_000))))
    with pytest.raises(BodyTooLarge):
        fetch(HttpClient(policy=PUBLIC), public.url("/stream"), max_bytes=100_000)


# --- no proxies, cookies or credentials -----------------------------------------------------------


def test_environment_proxies_are_ignored(public, monkeypatch):
    with LoopbackServer({"*": Reply(200, {}, b"proxy")}) as proxy:
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, proxy.origin)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        assert fetch(HttpClient(policy=None), public.url("/")).content == b"reached"
        assert proxy.hits() == 0


def test_no_cookies_are_kept_between_requests(public):
    public.route("/set", Reply(200, {"Set-Cookie": "session=abc; Path=/"}, b"set"))
    client = HttpClient(policy=PUBLIC)
    fetch(client, public.url("/set"))
    fetch(client, public.url("/echo"))
    assert public.requests[1].headers["Cookie"] is None


def test_netrc_credentials_are_not_sent(public, monkeypatch, tmp_path):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login admin password s3cret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    fetch(HttpClient(policy=PUBLIC), public.url("/"))
    assert public.requests[0].headers["Authorization"] is None


@pytest.mark.parametrize("userinfo", ["admin:s3cret@", "admin@", ":s3cret@", ":@"])
def test_url_with_user_or_password_is_refused(public, userinfo):
    with pytest.raises(InvalidURL) as excinfo:
        fetch(HttpClient(policy=None), f"http://{userinfo}127.0.0.1:{public.port}/")
    assert "s3cret" not in str(excinfo.value)
    assert public.hits() == 0


@pytest.mark.parametrize("url", ["ftp://example.com/", "file:///etc/passwd", "gopher://127.0.0.1:70/",
                                 "javascript:alert(1)", "example.com/page", "//example.com/"])
def test_only_http_and_https_are_fetched(url):
    with pytest.raises(InvalidURL):
        fetch(HttpClient(policy=None), url)


@pytest.mark.parametrize("url", ["http://[::1/", "http://exa mple.com/", "http://host:99999/", "http:///x",
                                 "http://", ""])
def test_unparseable_url_is_a_clear_invalid_url(url):
    with pytest.raises(InvalidURL):
        fetch(HttpClient(policy=None, resolver=names({})), url)


def test_user_agent_is_set_unless_the_caller_overrides_it(public):
    client = HttpClient(policy=PUBLIC, user_agent="webtools-test (+https://example.org/bot)")
    fetch(client, public.url("/"))
    fetch(client, public.url("/"), headers={"User-Agent": "custom"})
    assert public.requests[0].headers["User-Agent"] == "webtools-test (+https://example.org/bot)"
    assert public.requests[1].headers["User-Agent"] == "custom"


# --- TLS -------------------------------------------------------------------------------------------


@pytest.fixture
def tls_server(tmp_path):
    context, ca_file = make_tls_context(tmp_path, ["public.test"])
    with LoopbackServer({"*": OK}, tls=context) as server:
        server.ca_file = ca_file
        yield server


def test_tls_verifies_the_certificate_for_the_host_name_sent_as_sni(tls_server):
    client = HttpClient(policy=PUBLIC, ca_certs=tls_server.ca_file,
                        resolver=names({"public.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]}))
    assert fetch(client, tls_server.url("/", host="public.test")).content == b"reached"
    assert tls_server.sni_names == ["public.test"]
    with pytest.raises(ConnectionFailed) as excinfo:
        fetch(client, tls_server.url("/", host="other.test"))  # same address, certificate for another name
    assert "certificate" in str(excinfo.value)
    assert tls_server.hits() == 1


def test_tls_to_loopback_is_refused_before_the_handshake(tls_server):
    client = HttpClient(ca_certs=tls_server.ca_file, resolver=names({"public.test": ["127.0.0.1"]}))
    with pytest.raises(AddressNotAllowed):
        fetch(client, tls_server.url("/", host="public.test"))
    assert tls_server.sni_names == []


# --- the response object and error messages -------------------------------------------------------


def test_response_reports_type_charset_text_and_json(public):
    public.route("/latin", Reply(200, {"Content-Type": 'Text/HTML; Charset="ISO-8859-1"'}, "café".encode("latin-1")))
    public.route("/json", Reply(200, {"Content-Type": "application/json"}, b'{"a": [1, 2]}'))
    client = HttpClient(policy=PUBLIC)
    latin = fetch(client, public.url("/latin"))
    assert (latin.content_type, latin.charset, latin.text()) == ("text/html", "ISO-8859-1", "café")
    data = fetch(client, public.url("/json"))
    assert (data.content_type, data.charset, data.json()) == ("application/json", None, {"a": [1, 2]})
    bad = fetch(client, public.url("/latin"))
    with pytest.raises(NetError):
        bad.json()


def test_refused_connection_is_a_connection_failure_without_the_query(public):
    port = public.port
    public.stop()
    with pytest.raises(ConnectionFailed) as excinfo:
        fetch(HttpClient(policy=None), f"http://127.0.0.1:{port}/search?key=s3cret")
    assert "s3cret" not in str(excinfo.value)


def test_every_error_is_a_net_error():
    for error in (InvalidURL, AddressNotAllowed, RedirectNotAllowed, TooManyRedirects, FetchTimeout,
                  BodyTooLarge, ConnectionFailed, Cancelled):
        assert issubclass(error, NetError)


# --- what a failed connection says ------------------------------------------------------------------


def failing_resolver(code):
    """A resolver failing as getaddrinfo does: ``socket.gaierror`` with its own error code."""
    import socket

    def resolve(host, port):
        raise socket.gaierror(code, "as getaddrinfo says it")
    return resolve


def test_a_name_without_an_address_says_so():
    import socket

    with pytest.raises(ConnectionFailed) as excinfo:
        fetch(HttpClient(resolver=failing_resolver(socket.EAI_NONAME)), "http://nonexistent.invalid/a?k=s3cret")
    assert excinfo.value.kind == ConnectionFailed.NO_ADDRESS
    assert str(excinfo.value) == (
        "The host nonexistent.invalid could not be found: no address is registered for that name.")
    assert str(excinfo.value.url) == "http://nonexistent.invalid/a?k=s3cret"  # for the caller; never in the text


def test_a_machine_without_a_name_server_says_the_network_may_be_unreachable():
    import socket

    from webtools.net.errors import no_network

    with pytest.raises(ConnectionFailed) as excinfo:
        fetch(HttpClient(resolver=failing_resolver(socket.EAI_AGAIN)), "http://example.com/")
    assert excinfo.value.kind == ConnectionFailed.NAME_SERVICE
    assert "no name server answered" in str(excinfo.value) and "network may be unreachable" in str(excinfo.value)
    assert no_network(str(excinfo.value)) and not no_network("Fetching x failed (HTTP 500).")


def test_a_refused_port_says_nothing_accepts_connections_there(public):
    port = public.port
    public.stop()
    with pytest.raises(ConnectionFailed) as excinfo:
        fetch(HttpClient(policy=PUBLIC), f"http://127.0.0.1:{port}/")
    assert excinfo.value.kind == ConnectionFailed.REFUSED
    assert str(excinfo.value) == f"127.0.0.1:{port} refused the connection: nothing accepts connections on that port."


def test_a_connection_reset_before_the_answer_says_so():
    import socket
    import struct

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]

    def reset_the_first():
        conn, _ = listener.accept()
        conn.recv(1024)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST, not FIN
        conn.close()

    thread = threading.Thread(target=reset_the_first)
    thread.start()
    try:
        with pytest.raises(ConnectionFailed) as excinfo:
            fetch(HttpClient(policy=PUBLIC), f"http://127.0.0.1:{port}/page")
    finally:
        thread.join(5)
        listener.close()
    assert excinfo.value.kind == ConnectionFailed.RESET
    assert str(excinfo.value) == f"The server of http://127.0.0.1:{port}/page closed the connection before it answered."


class ClosesItsFirstConnection:
    """A raw HTTP/1.1 server on 127.0.0.1 whose first connection answers one request, keeps the
    connection, and closes it without answering the next (a keep-alive timeout crossing a client's
    reuse, made certain); every later connection answers each request with ``again``. With ``tls`` (a
    server context) it speaks HTTPS; with ``answers_first=False`` no connection answers anything."""

    def __init__(self, tls=None, answers_first=True):
        self.tls, self.answers_first = tls, answers_first
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.requests = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def url(self, path="/"):
        return f"http://127.0.0.1:{self.port}{path}"

    def _read_request(self, reader):
        head = []
        while (line := reader.readline()) not in (b"\r\n", b""):
            head.append(line)
        if not head:
            return False
        length = next((int(h.split(b":")[1]) for h in head if h.lower().startswith(b"content-length:")), 0)
        reader.read(length)
        self.requests.append((self.connections, head[0].split()[0].decode()))
        return True

    def _serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            try:
                conn = self.tls.wrap_socket(conn, server_side=True) if self.tls else conn
            except (OSError, ssl.SSLError):
                continue
            with conn, conn.makefile("rb") as reader:
                if not self._read_request(reader) or not self.answers_first:
                    continue
                if self.connections == 1:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst")
                    self._read_request(reader)  # read, never answered: the connection closes
                    continue
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nagain")

    def close(self):
        self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (close alone does not, on Linux)
        self.listener.close()
        self.thread.join(5)
        assert not self.thread.is_alive()


@pytest.fixture
def closes_its_first_connection():
    server = ClosesItsFirstConnection()
    yield server
    server.close()


@pytest.fixture(params=["http", "https"])
def scheme_and_client(request, tmp_path):
    """Each scheme with its client: for HTTPS a test CA's certificate for ``public.test``."""
    if request.param == "http":
        return "http", None, HttpClient(policy=PUBLIC, resolver=names({"public.test": ["127.0.0.1"]}))
    context, ca_file = make_tls_context(tmp_path, ["public.test"])
    return "https", context, HttpClient(policy=PUBLIC, resolver=names({"public.test": ["127.0.0.1"]}),
                                        ca_certs=ca_file)


def test_a_get_on_a_kept_connection_the_server_closed_unanswered_is_sent_again_on_a_new_one(
        scheme_and_client):
    scheme, tls, client = scheme_and_client
    server = ClosesItsFirstConnection(tls=tls)
    try:
        assert fetch(client, f"{scheme}://public.test:{server.port}/one").content == b"first"
        assert fetch(client, f"{scheme}://public.test:{server.port}/two").content == b"again"
    finally:
        server.close()
    # The second request went out on the kept connection, went unanswered, and went again on a new one.
    assert server.requests == [(1, "GET"), (1, "GET"), (2, "GET")]


def test_a_get_a_new_connection_leaves_unanswered_is_not_sent_again(scheme_and_client):
    # Only a reused connection may have been closed by an idle timeout; a new one that fails is the
    # server's answer (urllib3 connects an HTTPS connection before its request: still new).
    scheme, tls, client = scheme_and_client
    server = ClosesItsFirstConnection(tls=tls, answers_first=False)
    try:
        with pytest.raises(ConnectionFailed) as excinfo:
            fetch(client, f"{scheme}://public.test:{server.port}/one")
    finally:
        server.close()
    assert excinfo.value.kind == ConnectionFailed.RESET
    assert server.requests == [(1, "GET")]


def test_a_post_on_a_kept_connection_the_server_closed_unanswered_is_not_sent_again(
        closes_its_first_connection):
    server = closes_its_first_connection
    client = HttpClient(policy=PUBLIC)
    assert fetch(client, server.url("/one")).content == b"first"
    with pytest.raises(ConnectionFailed) as excinfo:
        client.request("POST", server.url("/order"), data=b"pay once", max_bytes=1024, timeout=5)
    assert excinfo.value.kind == ConnectionFailed.RESET
    assert str(excinfo.value) == f"The server of {server.url('/order')} closed the connection before it answered."
    assert server.requests == [(1, "GET"), (1, "POST")]  # a POST may have had its effect: never twice


def test_a_request_sent_again_dials_a_new_connection_through_the_guard(closes_its_first_connection):
    # The name now resolves to a private address: the new connection is refused, not the kept one reused.
    server = closes_its_first_connection
    answers = iter([["127.0.0.1"], ["127.0.0.2"]])
    client = HttpClient(policy=PUBLIC, resolver=lambda host, port: next(answers))
    assert fetch(client, f"http://rebind.test:{server.port}/one").content == b"first"
    with pytest.raises(AddressNotAllowed):
        fetch(client, f"http://rebind.test:{server.port}/two")
    assert server.requests == [(1, "GET"), (1, "GET")]


def test_a_self_signed_certificate_is_a_tls_failure(tmp_path):
    # The server's certificate comes from a CA the client does not trust (as a self-signed one does).
    context, _ca_file = make_tls_context(tmp_path, ["public.test"])
    with LoopbackServer({"*": OK}, tls=context) as server:
        client = HttpClient(policy=PUBLIC, resolver=names({"public.test": ["127.0.0.1"]}))
        with pytest.raises(ConnectionFailed) as excinfo:
            fetch(client, server.url("/", host="public.test"))
    assert excinfo.value.kind == ConnectionFailed.TLS
    assert str(excinfo.value).startswith(f"The TLS connection to https://public.test:{server.port}/ failed")
