"""One reading of a URL (webtools.net.urls): the rules, then property-based tests against the libraries
that really act (urllib3's parser and connection pools, requests' request preparation, glibc's
``inet_aton``) and against a real server on 127.0.0.1 that records the Host it was asked for.
"""
from __future__ import annotations

import ipaddress
import re
import socket

import pytest
import requests
import urllib3
from django.core.exceptions import ValidationError
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from tests.servers import LoopbackServer, Reply, raw
from webtools.net import URL, AddressPolicy, HttpClient, InvalidURL, read_url
from webtools.runtime.domains import normalize_domain, refusal

# --- the rules, spelled out ------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", [
    "http://evil.com/", "http://EVIL.COM/", "http://evil.com./", "http://%65vil.com/", "http://evil%2ecom/",
    "http://%45%56%49%4c.com/", "http://ｅｖｉｌ.com/", "http://evil．com/", "http://evil。com/", "http://evil｡com/",
    "http://ＥＶＩＬ。ＣＯＭ/", "http://evil.com:80/", "http://evil.com:/", "http://evil.com:0080/",
    "  http://evil.com/  ", "HTTP://evil.com",
])
def test_every_spelling_of_a_host_reads_as_that_host(spelling):
    url = read_url(spelling)
    assert (url.scheme, url.host, url.port, url.target) == ("http", "evil.com", 80, "/")
    assert str(url) == "http://evil.com/"


def test_international_names_are_idna_and_percent_encoded_utf8_is_decoded():
    assert read_url("https://Bücher.de/").host == "xn--bcher-kva.de"
    assert read_url("https://b%C3%BCcher.de/").host == "xn--bcher-kva.de"
    assert read_url("https://B%c3%9cCHER.de/").host == "xn--bcher-kva.de"


@pytest.mark.parametrize("spelling, address", [
    ("http://127.1/", "127.0.0.1"), ("http://0x7f.0.0.1/", "127.0.0.1"), ("http://0177.0.0.1/", "127.0.0.1"),
    ("http://2130706433/", "127.0.0.1"), ("http://017700000001/", "127.0.0.1"), ("http://127.0.0.1./", "127.0.0.1"),
    ("http://010.0.0.1/", "8.0.0.1"), ("http://１２７.０.０.１/", "127.0.0.1"), ("http://%31%32%37.1/", "127.0.0.1"),
    ("http://0x7f000001/", "127.0.0.1"), ("http://169.254.43518/", "169.254.169.254"),
])
def test_ipv4_in_any_form_getaddrinfo_accepts_becomes_its_dotted_quad(spelling, address):
    assert read_url(spelling).host == address


@pytest.mark.parametrize("spelling, host", [
    ("http://[::1]/", "::1"), ("http://[::FFFF:127.0.0.1]:8080/", "::ffff:7f00:1"),
    ("http://[2001:DB8:0:0::1]/", "2001:db8::1"),
])
def test_ipv6_is_read_in_its_compressed_form_and_written_in_brackets(spelling, host):
    url = read_url(spelling)
    assert url.host == host
    assert url.netloc.startswith(f"[{host}]")


def test_path_and_query_are_what_the_client_sends_and_the_fragment_is_dropped():
    url = read_url("https://a.test/x/../y/./z%7e%2f ü?q=a b&r=%41#frag")
    assert url.target == "/y/z~%2F%20%C3%BC?q=a%20b&r=A"
    assert read_url("https://a.test").target == "/"
    assert read_url("https://a.test?q").target == "/?q"
    assert read_url("https://a.test/p?").target == "/p"  # requests sends no empty "?"
    assert read_url("https://a.test//x//y").target == "//x//y"  # sent as it is (tested against a server)
    assert read_url("https://a.test:8443/p?q=1").origin == "https://a.test:8443"
    assert read_url("https://a.test/p?key=s3cret").display() == "https://a.test/p"


@pytest.mark.parametrize("url, message", [
    ("http://evil.com\\@example.com/", "backslash"),
    ("http://example.com\\.evil.com/", "backslash"),
    ("http://user:pass@example.com/", "user name or password"),
    ("http://@example.com/", "user name or password"),
    ("http://exa\tmple.com/", "control character"),
    ("http://example.com/\nx", "control character"),
    ("http://exa mple.com/", "space"),
    ("http://exa%20mple.com/", "space"),
    ("http://exa%00mple.com/", "control character"),
    ("http://[::1", r"\[ without a closing \]"),
    ("http://[::1/", r"\[ without a closing \]"),
    ("http://::1/", "brackets"),
    ("http://[::1]x/", "not a port"),
    ("http://a]b/", r"\[ or \]"),
    ("http://[fe80::1%25eth0]/", "zone"),
    ("http://[not-v6]/", "not a valid IPv6"),
    ("http://example.com:0/", "outside 1-65535"),
    ("http://example.com:65536/", "outside 1-65535"),
    ("http://example.com:8o/", "not a number"),
    ("http://example.com:-1/", "not a number"),
    ("http://evil%40good.com/", "not a valid host name"),
    ("http://evil%2fgood.com/", "not a valid host name"),
    ("http://ev%il.com/", "not a valid host name"),
    ("http://%C3%28.com/", "not UTF-8"),
    ("http://a_b\u2044c.com/", "internationalised"),
    ("http://example..com/", "not a valid host name"),
    ("http://1.2.3.4.5/", "IPv4"),
    ("http://foo.123/", "IPv4"),
    ("http://256.1.1.1/", "IPv4"),
    ("http://08.1.1.1/", "IPv4"),
    # A part "0x" with no digits: browsers (WHATWG) read it as 0, inet_aton refuses it, so urllib3 would
    # look "0.0x" up in the DNS as a name.
    ("http://0.0x/", "0x with no digits"),
    ("http://0X/", "0x with no digits"),
    ("http://0x.1.2.3/", "0x with no digits"),
    ("http:///path", "no host"),
    ("http:/example.com/", "no host"),
    ("http:example.com", "no host"),
    ("example.com/page", "no scheme"),
    ("//example.com/", "no scheme"),
    ("", "no scheme"),
    ("gopher://example.com/", "not gopher: URLs"),
    ("file:///etc/passwd", "not file: URLs"),
    ("javascript:alert(1)", "not javascript: URLs"),
])
def test_what_parsers_read_differently_is_refused_with_a_clear_message(url, message):
    with pytest.raises(InvalidURL, match=message):
        read_url(url)


def test_a_url_that_is_not_a_string_is_refused():
    with pytest.raises(InvalidURL, match="must be a string"):
        read_url(None)  # type: ignore[arg-type]


def test_a_redirect_location_is_read_against_the_url_it_came_from():
    base = read_url("https://a.test/dir/page?x=1")
    assert str(read_url("other", base=base)) == "https://a.test/dir/other"
    assert str(read_url("/root", base=base)) == "https://a.test/root"
    assert str(read_url("//%65vil.com/x", base=base)) == "https://evil.com/x"
    assert str(read_url("HTTP://Evil.com:80", base=base)) == "http://evil.com/"
    assert str(read_url("", base=base)) == "https://a.test/dir/page?x=1"
    with pytest.raises(InvalidURL, match="not gopher: URLs"):
        read_url("gopher://a.test/", base=base)
    with pytest.raises(InvalidURL, match="backslash"):
        read_url("//evil.com\\@a.test/", base=base)
    with pytest.raises(InvalidURL, match="control character"):
        read_url("/a\r\nSet-Cookie: x=1", base=base)


def test_a_read_url_is_its_own_reading():
    url = read_url("https://a.test/p")
    assert read_url(url) is url
    assert read_url(url, base=read_url("https://other.test/")) is url
    assert read_url(str(url)) == url


# --- property-based: generated URLs against the libraries that act -------------------------------

_LABEL_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _fullwidth(ch: str) -> str:
    return chr(ord(ch) - 0x21 + 0xFF01) if "!" <= ch <= "~" else ch


@st.composite
def spelled(draw, host: str) -> str:
    """``host`` spelled some way a browser still reads as ``host``: per character upper case,
    percent-encoded (either hex case), full-width; dots as full-width or ideographic dots; a
    trailing dot."""
    out = []
    for ch in host:
        if ch == ".":
            out.append(draw(st.sampled_from([".", ".", ".", "．", "。", "｡", "%2e", "%2E"])))
            continue
        how = draw(st.sampled_from(["keep", "keep", "upper", "percent", "percent_lower", "fullwidth"]))
        if how == "upper":
            out.append(ch.upper())
        elif how == "percent":
            out.append("%%%02X" % ord(ch))
        elif how == "percent_lower":
            out.append("%%%02x" % ord(ch))
        elif how == "fullwidth":
            out.append(_fullwidth(draw(st.sampled_from([ch, ch.upper()]))))
        else:
            out.append(ch)
    if draw(st.booleans()) and draw(st.booleans()):
        out.append(".")
    return "".join(out)


# Labels shaped like hex numbers ("0x", "0x1f") are names in the middle of a host and numbers at its end.
labels = st.one_of(st.text(_LABEL_CHARS, min_size=1, max_size=8), st.sampled_from(["0x", "0x1f", "0xg", "1"]))


def _ends_in_a_number(host: str) -> bool:
    """WHATWG URL's "ends in a number": the last label is decimal digits or 0x and hex digits (none
    needed), and the host is then read as an IPv4 address."""
    return re.fullmatch(r"[0-9]+|0[xX][0-9a-fA-F]*", host.rstrip(".").rsplit(".", 1)[-1]) is not None


any_names = st.lists(labels, min_size=1, max_size=4).map(".".join)
names = st.lists(labels, min_size=2, max_size=4).map(".".join).filter(lambda h: not _ends_in_a_number(h))
# Each part is mostly well-formed, so that a good share of URLs is accepted and compared, and
# sometimes hostile.
ports = st.one_of(
    st.just(""), st.just(""), st.just(":"), st.integers(1, 65535).map(lambda p: f":{p}"),
    st.integers(0, 70000).map(lambda p: f":{p}"), st.integers(1, 65535).map(lambda p: f":{p:07d}"),
    st.sampled_from([":80", ":443", ":x", ":-1", ": 1"]),
)
userinfo = st.sampled_from([""] * 12 + ["user@", "user:pass@", "@", "a%40b@", "evil.test\\@", "evil.test%5C@"])


def pieces(alphabet: list[str], min_size: int = 0, max_size: int = 12):
    """Strings made of the given pieces (characters or short sequences such as escapes)."""
    return st.lists(st.sampled_from(alphabet), min_size=min_size, max_size=max_size).map("".join)


paths = st.one_of(
    pieces(list("abc/?#%.@: ü-~") + ["%41", "%2f", "%2F", "%zz", "/../", "/./"], max_size=20).map(lambda p: "/" + p),
    pieces(list("abc/?#%.\\@: ü-~") + ["%41", "%2f", "%2F", "%zz", "/../", "/./", "\t"], max_size=20),
)


@st.composite
def hosts(draw) -> str:
    kind = draw(st.sampled_from(["name"] * 6 + ["ipv4", "ipv4", "ipv6", "junk"]))
    if kind == "name":
        return draw(spelled(draw(names)))
    if kind == "ipv4":
        address = draw(st.integers(0, 2**32 - 1))
        form = draw(st.sampled_from(["dotted", "int", "hex", "octal", "short", "parts"]))
        if form == "parts":
            # Up to four parts, each decimal or hex; a zero part often as "0x" alone, which browsers
            # read as 0 and inet_aton refuses.
            parts = draw(st.lists(st.one_of(st.just(0), st.integers(0, 255)), min_size=1, max_size=4))
            return ".".join(
                draw(st.sampled_from([str(p), hex(p)] + (["0x", "0X"] if p == 0 else []))) for p in parts
            )
        if form == "dotted":
            return str(ipaddress.IPv4Address(address))
        if form == "int":
            return str(address)
        if form == "hex":
            return hex(address)
        if form == "octal":
            return "0" + oct(address)[2:]
        a, b = address >> 24, address & 0xFFFFFF
        return f"{a}.{b}"
    if kind == "ipv6":
        address = ipaddress.IPv6Address(draw(st.integers(0, 2**128 - 1)))
        text = draw(st.sampled_from([address.compressed, address.exploded, address.exploded.upper()]))
        return draw(st.sampled_from([f"[{text}]"] * 3 + [f"[{text}", text, f"[{text}%25eth0]"]))
    return draw(pieces(list("ab.%:[]@\\ １．") + ["%2e", "%5c", "%40", "%C3%BC"], min_size=1))


@st.composite
def urls(draw) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "hTtPs"] * 3 + ["ftp", "gopher", ""]))
    sep = draw(st.sampled_from(["://"] * 12 + [":/", ":", ":\\\\"]))
    return f"{scheme}{sep}{draw(userinfo)}{draw(hosts())}{draw(ports)}{draw(paths)}"


def _read(text):
    try:
        return read_url(text)
    except InvalidURL:
        return None


def _urllib3_host(text: str) -> tuple[str | None, int | None, str | None] | None:
    """(host, port, auth) as urllib3 reads ``text`` for a connection, or None when it cannot."""
    try:
        parts = parse_url(text)
    except LocationParseError:
        return None
    host = parts.host
    if host is not None:
        host = host.strip("[]").rstrip(".").lower()
    return host, parts.port, parts.auth


def _as_address(host: str) -> str | None:
    """The IPv4 address glibc's ``inet_aton`` (and so ``getaddrinfo``) makes of ``host``, if any."""
    if not re.fullmatch(r"[0-9a-fA-FxX.]+", host):
        return None
    try:
        return socket.inet_ntoa(socket.inet_aton(host))
    except OSError:
        return None


_pool_manager = urllib3.PoolManager()
_session = requests.Session()


@settings(max_examples=400, deadline=None, database=None)
@given(urls())
@example("http://evil.com\\@example.com/")
@example("http://%65vil.com/")
@example("http://evil%2ecom/")
@example("http://[::1")
@example("http://0.0x/")
def test_the_host_every_check_sees_is_the_host_urllib3_connects_to(text):
    url = _read(text)
    if url is None:
        return
    # The client hands urllib3 exactly str(url): its parser, its pool and requests' preparation
    # all read the same host, port and target back.
    canonical = str(url)
    assert _urllib3_host(canonical) == (url.host, None if url.port == {"http": 80, "https": 443}[url.scheme]
                                        else url.port, None)
    pool = _pool_manager.connection_from_url(canonical)
    assert (pool.host.strip("[]"), pool.port) == (url.host, url.port)
    connection = pool._new_conn()  # not connected: which host would it dial?
    assert connection._dns_host.strip("[]") == url.host
    assert _session.prepare_request(requests.Request("GET", canonical)).url == canonical
    assert read_url(canonical) == url
    # And where urllib3 itself reads the URL as given, it reads the same host (or an IPv4 spelling
    # of the same address), never another one, and never with user info: what it would connect to
    # with the original string is what was checked.
    raw = _urllib3_host(text.strip())
    if raw is not None and raw[0]:
        host, _port, auth = raw
        assert auth is None
        if url.is_ip and ":" not in url.host:
            assert _as_address(host) == url.host
        elif re.fullmatch(r"[a-z0-9_.-]+", host):
            assert host == url.host


@settings(max_examples=300, deadline=None, database=None)
@given(names, st.data())
def test_allow_and_deny_decisions_agree_on_every_spelling_of_one_host(name, data):
    try:
        entry = normalize_domain(name)
    except Exception:
        assume(False)
    spelling = data.draw(spelled(name))
    sub = data.draw(st.sampled_from(["", "www.", "A.b."]))
    port = data.draw(st.sampled_from(["", ":8080", ":443"]))
    path = data.draw(st.sampled_from(["/", "/x?y=1", "", "/%65"]))
    url = read_url(f"https://{sub}{spelling}{port}{path}")
    assert url.host == (sub.lower() + entry)
    assert refusal(url.host, allow=[entry], deny=[]) is None
    assert refusal(url.host, allow=[], deny=[entry]) is not None
    assert refusal(url.host, allow=["other.example"], deny=[]) is not None


@settings(max_examples=300, deadline=None, database=None)
@given(any_names)
@example("0.0x")
@example("a.0x1f")
def test_a_domain_list_entry_is_accepted_only_as_the_host_a_url_reads(name):
    # An operator's entry that no URL's host can ever equal ("0.0x" is read as an address or refused)
    # would allow or deny nothing; it is refused when entered.
    try:
        entry = normalize_domain(name, allow_public_suffix=True)
    except ValidationError:
        entry = None
    url = _read(f"https://{name}/")
    assert entry == (url.host if url is not None and url.host == name.lower() else None)


# --- against a real server: the Host it was asked for is the host that was checked ---------------


@pytest.fixture(scope="module")
def recording_server():
    with LoopbackServer({"*": Reply(200, {"Content-Type": "text/plain"}, "ok")}) as server:
        yield server


def _client() -> HttpClient:
    # Every name is 127.0.0.1 here; the policy lets loopback stand in for a public address.
    return HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"]),
                      resolver=lambda host, port: ["127.0.0.1"])


def _redirect_utf8(location: str) -> raw:
    """A 302 whose Location is sent as UTF-8 bytes, as servers send non-ASCII locations."""

    def write(request, handler) -> None:
        handler.wfile.write(b"HTTP/1.1 302 Found\r\nLocation: " + location.encode("utf-8")
                            + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    return raw(write)


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=names, second=names, data=st.data())
def test_a_real_server_is_asked_for_the_host_each_hop_was_checked_for(recording_server, first, second, data):
    port = recording_server.port
    first_spelling, second_spelling = data.draw(spelled(first)), data.draw(spelled(second))
    recording_server.route("/hop", _redirect_utf8(f"http://{second_spelling}:{port}/end"))
    checked: list[URL] = []
    before = len(recording_server.requests)
    with _client() as client:
        with client.follow("GET", f"http://{first_spelling}:{port}/hop", check_hop=checked.append,
                           timeout=5) as response:
            assert response.status_code == 200
    received = [r.headers["Host"] for r in recording_server.requests[before:]]
    assert received == [f"{hop.host}:{port}" for hop in checked]
    assert [hop.host for hop in checked] == [first, second]


@pytest.mark.parametrize("spelling", ["127.1", "0x7f.0.0.1", "2130706433", "0177.0.0.01", "%31%32%37.0.0.1"])
def test_an_ipv4_spelling_is_dialled_as_the_address_that_was_checked(recording_server, spelling):
    port = recording_server.port
    checked: list[URL] = []
    before = len(recording_server.requests)
    with HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"])) as client:
        client.follow("GET", f"http://{spelling}:{port}/x", check_hop=checked.append, timeout=5).close()
    assert [hop.host for hop in checked] == ["127.0.0.1"]
    assert recording_server.requests[before].headers["Host"] == f"127.0.0.1:{port}"
    assert recording_server.requests[before].client[0] == "127.0.0.1"


def test_an_error_message_shows_a_url_without_user_info_query_or_unreadable_parts():
    from webtools.net.urls import display_url

    assert display_url("https://operator:s3cret@models.example.com:8443/v1?api-key=s3cret#x") == (
        "https://models.example.com:8443/v1"
    )
    assert display_url("http://evil.com\\@example.com/") == "(unreadable URL)"
    assert display_url("gopher://example.com/") == "(unreadable URL)"


sendable_paths = pieces(list("abc/?%.@:ü-~") + ["%41", "%2f", "%zz", "/../", "/./", "\\", "#x"], max_size=16)


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(second=names, query=pieces(list("ab=&%/?ü") + ["%41"], max_size=8), path=sendable_paths, data=st.data())
def test_a_real_server_receives_the_target_each_hop_was_checked_for(recording_server, second, query, path, data):
    # Location in each form a server may send it: absolute, scheme-relative, path-absolute, relative.
    port = recording_server.port
    spelling = data.draw(spelled(second))
    location = data.draw(st.sampled_from([
        f"http://{spelling}:{port}/{path}", f"//{spelling}:{port}/{path}",
        "/" + path.lstrip("/"), "./" + path.lstrip("/"),  # neither scheme-relative nor with a scheme
    ]))
    recording_server.route("/hop", _redirect_utf8(location))
    checked: list[URL] = []
    before = len(recording_server.requests)
    with _client() as client:
        client.follow("GET", f"http://first.test:{port}/hop?{query}", check_hop=checked.append, timeout=5).close()
    received = recording_server.requests[before:]
    assert [(r.headers["Host"], r.path + (f"?{r.query}" if r.query else "")) for r in received] == [
        (f"{hop.host}:{port}", _as_http_server_records(hop.target)) for hop in checked
    ]


def _as_http_server_records(target: str) -> str:
    # Python's http.server rewrites a received path that starts with "//" to a single "/" (an open
    # redirect guard of its own); the client sent the target as it is.
    return "/" + target.lstrip("/") if target.startswith("//") else target
