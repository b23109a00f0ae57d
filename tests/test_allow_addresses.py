"""``WEBTOOLS["ALLOW_ADDRESSES"]``: the private addresses an operator lets the guarded client reach.

The CIDR matching is held by property tests to an independent reading (the address's top bits against
the network's, as integers); the rest runs real sockets on loopback, where 127.0.0.1 is the "intranet
host" the list names and 127.0.0.2 a private address it does not.
"""
from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.servers import LoopbackServer, Reply
from tests.test_net_client import names
from webtools.net import DEFAULT_POLICY, AddressNotAllowed, AllowList, HttpClient
from webtools.net.policy import METADATA

PRIVATE = "a private network address"
METADATA_ADDRESSES = [str(rule.network.network_address) for rule in DEFAULT_POLICY.rules if rule.reason == METADATA]


def networks(version):
    bits = 32 if version == 4 else 128
    make = ipaddress.IPv4Network if version == 4 else ipaddress.IPv6Network
    return st.builds(lambda n, plen: make((n >> (bits - plen) << (bits - plen), plen)),
                     st.integers(0, 2 ** bits - 1), st.integers(0, bits))


def addresses(version):
    bits = 32 if version == 4 else 128
    return st.integers(0, 2 ** bits - 1).map(ipaddress.IPv4Address if version == 4 else ipaddress.IPv6Address)


def inside(address, network) -> bool:
    """The independent reading: the same version, and the same top ``prefixlen`` bits."""
    bits = network.max_prefixlen
    shift = bits - network.prefixlen
    return address.version == network.version and int(address) >> shift == int(network.network_address) >> shift


@given(st.sampled_from([4, 6]).flatmap(lambda v: st.tuples(networks(v), addresses(v), addresses(6 if v == 4 else 4))))
def test_an_address_passes_exactly_when_a_listed_network_holds_it(case):
    network, address, other_version = case
    allow = AllowList([str(network)])
    assert allow.permits(address, None, PRIVATE) == inside(address, network)
    assert not allow.permits(other_version, None, PRIVATE)


@given(st.sampled_from([4, 6]).flatmap(lambda v: st.tuples(st.lists(networks(v), max_size=4), addresses(v))))
def test_a_list_passes_what_any_of_its_networks_holds(case):
    listed, address = case
    assert AllowList([str(n) for n in listed]).permits(address, None, PRIVATE) == any(
        inside(address, n) for n in listed)


@given(st.sampled_from(METADATA_ADDRESSES).flatmap(
    lambda a: st.tuples(st.just(ipaddress.ip_address(a)), st.integers(0, ipaddress.ip_address(a).max_prefixlen - 1))))
def test_a_metadata_address_passes_only_when_named_one_by_one(case):
    address, prefix = case
    covering = ipaddress.ip_network((address, prefix), strict=False)
    reason = DEFAULT_POLICY.verdict(address).reason
    assert reason == METADATA
    assert not AllowList([str(covering)]).permits(address, None, reason)
    assert not AllowList(["metadata.internal"]).permits(address, "metadata.internal", reason)
    assert AllowList([str(address)]).permits(address, None, reason)
    assert AllowList([f"{address}/{address.max_prefixlen}"]).permits(address, None, reason)


LABEL = r"[a-z]([a-z0-9-]{0,20}[a-z0-9])?"


@given(st.from_regex(rf"{LABEL}(\.{LABEL}){{0,3}}", fullmatch=True), addresses(4))
def test_a_host_name_passes_its_own_addresses_for_that_name_only(host, address):
    allow = AllowList([host.upper() + "."])  # names compare without case or a final dot
    assert allow.permits(address, host, PRIVATE)
    assert allow.permits(address, host + ".", PRIVATE)
    assert not allow.permits(address, "x" + host, PRIVATE)
    assert not allow.permits(address, None, PRIVATE)


def test_every_bad_entry_is_named_at_once():
    with pytest.raises(ValueError) as bad:
        AllowList(["10.0.0.0/8", "10.0.0.5/8", "not a host", "http://wiki.example/", "ok.example"])
    message = str(bad.value)
    assert "'10.0.0.5/8'" in message and "'not a host'" in message and "'http://wiki.example/'" in message
    assert "'10.0.0.0/8'" not in message and "ok.example" not in message


# -- through the guarded client, on real sockets -------------------------------------------------------


@pytest.fixture
def intranet():
    with LoopbackServer({"*": Reply(200, {"Content-Type": "text/plain"}, b"intranet page")}) as server:
        yield server


def get(client, url):
    return client.request("GET", url, max_bytes=1 << 16, timeout=5)


def test_a_listed_address_is_reached_and_its_neighbour_is_not(intranet):
    client = HttpClient(policy=DEFAULT_POLICY.with_allow_list(["127.0.0.1"]))
    assert get(client, intranet.url("/")).content == b"intranet page"
    with pytest.raises(AddressNotAllowed, match="loopback"):
        get(client, intranet.url("/").replace("127.0.0.1", "127.0.0.2"))
    with pytest.raises(AddressNotAllowed):  # the default table alone: refused
        get(HttpClient(), intranet.url("/"))


def test_a_listed_name_reaches_its_address_and_no_other_name_does(intranet):
    resolver = names({"wiki.intranet.test": ["127.0.0.1"], "attacker.test": ["127.0.0.1"],
                      "both.intranet.test": ["127.0.0.1", "127.0.0.2"]})
    client = HttpClient(policy=DEFAULT_POLICY.with_allow_list(["wiki.intranet.test"]), resolver=resolver)
    assert get(client, intranet.url("/", host="wiki.intranet.test")).content == b"intranet page"
    with pytest.raises(AddressNotAllowed):  # another name for the same private address
        get(client, intranet.url("/", host="attacker.test"))
    mixed = HttpClient(policy=DEFAULT_POLICY.with_allow_list(["127.0.0.1/32"]), resolver=resolver)
    with pytest.raises(AddressNotAllowed):  # one address allowed, one not: refused
        get(mixed, intranet.url("/", host="both.intranet.test"))
    assert intranet.hits() == 1


def test_a_name_resolving_to_a_metadata_address_stays_refused():
    resolver = names({"meta.intranet.test": ["169.254.169.254"]})
    client = HttpClient(policy=DEFAULT_POLICY.with_allow_list(["meta.intranet.test", "169.254.0.0/16"]),
                        resolver=resolver)
    with pytest.raises(AddressNotAllowed, match="cloud metadata"):
        get(client, "http://meta.intranet.test/latest/meta-data/")


# -- the setting ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_setting_lets_web_fetch_read_an_intranet_page(settings, django_user_model, intranet):
    from webtools.host import start_turn

    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_ADDRESSES": ["127.0.0.1"]}
    intranet.route("/robots.txt", Reply(404, {}, b""))
    user = django_user_model.objects.create_user("ivy", password="pw-ivy-123")
    with start_turn(user, requested_tools=["web_fetch"], messages=[f"Read {intranet.url('/doc')}"]) as turn:
        result = turn.call("web_fetch", {"url": intranet.url("/doc")})
    assert not result.is_error and "intranet page" in result.output["content"]
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_ADDRESSES": []}
    with start_turn(user, requested_tools=["web_fetch"], messages=[f"Read {intranet.url('/doc')}"]) as turn:
        refused = turn.call("web_fetch", {"url": intranet.url("/doc")})
    assert refused.is_error and "loopback" in refused.output["error"]


def test_check_names_every_bad_entry(settings):
    from webtools.checks import check_allow_addresses

    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_ADDRESSES": ["10.0.0.0/8", "10.1.2.3/8", "bad name!"]}
    [error] = check_allow_addresses()
    assert error.id == "webtools.E010" and "'10.1.2.3/8'" in error.msg and "'bad name!'" in error.msg
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_ADDRESSES": "10.0.0.0/8"}
    assert check_allow_addresses()[0].msg == 'WEBTOOLS["ALLOW_ADDRESSES"] must be a list.'
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_ADDRESSES": ["10.0.0.0/8", "wiki.intranet.example"]}
    assert check_allow_addresses() == []


@pytest.mark.django_db
def test_the_admin_shows_the_list_read_only(settings, admin_client):
    from django.urls import reverse

    from webtools.models import PluginOptions

    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_ADDRESSES": ["10.20.0.0/16", "wiki.intranet.example"]}
    row, _ = PluginOptions.objects.get_or_create(plugin="web_fetch")
    page = admin_client.get(reverse("admin:webtools_pluginoptions_change", args=[row.pk])).content.decode()
    assert ("allowed by WEBTOOLS[&quot;ALLOW_ADDRESSES&quot;] in settings: 10.20.0.0/16, wiki.intranet.example."
            in page)
    assert 'name="allow_addresses"' not in page  # shown, not a field
    settings.WEBTOOLS = {**settings.WEBTOOLS, "ALLOW_ADDRESSES": []}
    page = admin_client.get(reverse("admin:webtools_pluginoptions_change", args=[row.pk])).content.decode()
    assert "Private networks: none." in page
