"""The address policy, row by row, including the forms Python's ``is_global`` gets wrong."""
from __future__ import annotations

import ipaddress

import pytest

from webtools.net import DEFAULT_POLICY, DEFAULT_RULES, AddressNotAllowed, AddressPolicy, Rule

# (address, allowed, words the reason must contain). Every row of DEFAULT_RULES decides at least one
# case (test_every_row_of_the_table_is_exercised checks that).
CASES = [
    # IPv4
    ("0.0.0.0", False, "'this network'"),
    ("0.255.255.255", False, "'this network'"),
    ("10.0.0.1", False, "private network"),
    ("10.255.255.255", False, "private network"),
    ("100.64.0.1", False, "carrier-grade NAT"),
    ("100.127.255.254", False, "carrier-grade NAT"),
    ("127.0.0.1", False, "loopback"),
    ("127.255.255.254", False, "loopback"),
    ("169.254.0.1", False, "link-local"),
    ("169.254.169.254", False, "cloud metadata"),
    ("169.254.170.2", False, "cloud metadata"),
    ("169.254.170.23", False, "cloud metadata"),    # AWS EKS Pod Identity Agent
    ("169.254.0.23", False, "cloud metadata"),      # Tencent Cloud
    ("169.254.42.42", False, "cloud metadata"),     # Scaleway
    ("100.100.100.200", False, "cloud metadata"),   # Alibaba Cloud, inside carrier-grade NAT space
    ("168.63.129.16", False, "cloud metadata"),     # Azure WireServer, in otherwise public space
    ("168.63.129.15", True, "public"),
    ("168.63.129.17", True, "public"),
    ("192.0.0.192", False, "cloud metadata"),       # Oracle Cloud Classic
    ("172.16.0.1", False, "private network"),
    ("172.31.255.255", False, "private network"),
    ("192.0.0.1", False, "IETF protocol assignment"),
    ("192.0.0.193", False, "IETF protocol assignment"),
    ("192.0.2.1", False, "documentation"),
    ("192.88.99.1", False, "6to4 relay"),
    ("192.168.1.1", False, "private network"),
    ("198.18.0.1", False, "benchmarking"),
    ("198.19.255.255", False, "benchmarking"),
    ("198.51.100.1", False, "documentation"),
    ("203.0.113.1", False, "documentation"),
    ("224.0.0.1", False, "multicast"),
    ("239.255.255.250", False, "multicast"),
    ("240.0.0.1", False, "reserved"),
    ("255.255.255.254", False, "reserved"),
    ("255.255.255.255", False, "broadcast"),
    ("8.8.8.8", True, "public"),
    ("1.1.1.1", True, "public"),
    ("100.63.255.255", True, "public"),   # just below carrier-grade NAT
    ("100.128.0.0", True, "public"),      # just above it
    ("172.32.0.1", True, "public"),       # just above 172.16.0.0/12
    ("192.0.1.1", True, "public"),
    ("223.255.255.255", True, "public"),
    # IPv6
    ("::", False, "unspecified"),
    ("::1", False, "loopback"),
    ("::127.0.0.1", False, "loopback address (127.0.0.1) embedded in an IPv4-compatible"),
    ("::10.0.0.1", False, "private network address (10.0.0.1) embedded in an IPv4-compatible"),
    ("::8.8.8.8", True, "IPv4-compatible"),
    ("::ffff:127.0.0.1", False, "loopback address (127.0.0.1) embedded in an IPv4-mapped"),
    ("::ffff:7f00:1", False, "loopback address (127.0.0.1) embedded in an IPv4-mapped"),
    ("::ffff:169.254.169.254", False, "cloud metadata address (169.254.169.254) embedded"),
    ("::ffff:8.8.8.8", True, "IPv4-mapped"),
    ("::ffff:168.63.129.16", False, "cloud metadata address (168.63.129.16) embedded in an IPv4-mapped"),
    ("64:ff9b::a83f:8110", False, "cloud metadata address (168.63.129.16) embedded in a NAT64"),
    ("::ffff:0:7f00:1", False, "loopback address (127.0.0.1) embedded in an IPv4-translated"),
    ("::ffff:0:808:808", True, "IPv4-translated"),
    ("64:ff9b::7f00:1", False, "loopback address (127.0.0.1) embedded in a NAT64"),
    ("64:ff9b::a9fe:a9fe", False, "cloud metadata address (169.254.169.254) embedded in a NAT64"),
    ("64:ff9b::808:808", True, "NAT64"),
    # local-use NAT64: 10.0.0.1 in the /96 layout, and in the /48 layout (0a00 | u-octet | 0001)
    ("64:ff9b:1::a00:1", False, "embedded in a local-use NAT64"),
    ("64:ff9b:1:a00:0:100::", False, "private network address (10.0.0.1) embedded in a local-use NAT64"),
    ("64:ff9b:1:808:8:808:808:808", True, "local-use NAT64"),
    ("100::1", False, "discard-only"),
    ("2001:1::1", False, "IETF protocol assignment"),
    ("2001:2::1", False, "benchmarking"),
    # Teredo: server 65.54.227.120, client 192.0.2.45 stored inverted (3fff:fdd2)
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False, "documentation address (192.0.2.45) embedded in a Teredo"),
    # server 127.0.0.1 with a public client
    ("2001:0:7f00:1::f7f7:f7f7", False, "loopback address (127.0.0.1) embedded in a Teredo"),
    ("2001:0:808:808::f7f7:f7f7", True, "Teredo"),  # server 8.8.8.8, client 8.8.8.8
    ("2001:db8::1", False, "documentation"),
    ("2002:7f00:1::", False, "loopback address (127.0.0.1) embedded in a 6to4"),
    ("2002:a9fe:a9fe::1", False, "cloud metadata address (169.254.169.254) embedded in a 6to4"),
    ("2002:808:808::1", True, "6to4"),
    ("3fff::1", False, "documentation"),
    ("5f00::1", False, "segment routing"),
    ("fc00::1", False, "private network"),
    ("fd12:3456::1", False, "private network"),
    ("fd00:ec2::254", False, "cloud metadata"),     # AWS IMDS over IPv6
    ("fd00:ec2::23", False, "cloud metadata"),      # AWS EKS Pod Identity Agent over IPv6
    ("fd00:ec2::253", False, "private network"),    # AWS DNS: refused as unique local, not named
    ("fd20:ce::254", False, "cloud metadata"),      # Google Compute Engine over IPv6
    ("fd00:42::42", False, "cloud metadata"),       # Scaleway over IPv6
    ("fd00:a9fe:a9fe::1", False, "cloud metadata"),  # Akamai (Linode) over IPv6
    ("fd00:c1::a9fe:a9fe", False, "cloud metadata"),  # Oracle Cloud (OCI) over IPv6
    ("fe80::a9fe:a9fe", False, "cloud metadata"),   # OpenStack over IPv6
    ("fe80::1", False, "link-local"),
    ("fec0::1", False, "site-local"),
    ("ff02::1", False, "multicast"),
    ("2606:4700:4700::1111", True, "public"),
    ("2a00:1450:4001::1", True, "public"),
    ("4000::1", False, "outside global unicast"),
    ("1::1", False, "outside global unicast"),
]


@pytest.mark.parametrize("address, allowed, reason", CASES)
def test_table_row_decides_address(address, allowed, reason):
    verdict = DEFAULT_POLICY.verdict(address)
    assert verdict.allowed is allowed
    assert reason in verdict.reason


def test_every_row_of_the_table_is_exercised():
    exercised = {DEFAULT_POLICY.rule_for(address) for address, _, _ in CASES}
    missing = [str(rule.network) for rule in DEFAULT_RULES if rule not in exercised]
    assert missing == []


# Python 3.11's is_global calls these global; each would let a request reach loopback, a private
# network or an unroutable range if the policy trusted it.
IS_GLOBAL_IS_WRONG = [
    "64:ff9b::7f00:1",       # NAT64 of 127.0.0.1
    "64:ff9b:1::a00:1",      # local-use NAT64
    "2002:7f00:1::",         # 6to4 of 127.0.0.1
    "::127.0.0.1",           # IPv4-compatible 127.0.0.1
    "::ffff:0:7f00:1",       # SIIT of 127.0.0.1
    "192.0.0.192",           # inside 192.0.0.0/24
    "192.88.99.1",           # deprecated 6to4 relay anycast
    "224.0.0.1",             # multicast
    "ff02::1",               # multicast
    "fec0::1",               # site-local
    "3fff::1",               # documentation (RFC 9637)
    "5f00::1",               # SRv6 (RFC 9602)
]


@pytest.mark.parametrize("address", IS_GLOBAL_IS_WRONG)
def test_forms_python_calls_global_are_refused(address):
    assert ipaddress.ip_address(address).is_global, "Python fixed this one: keep the row, drop the case"
    assert not DEFAULT_POLICY.is_allowed(address)


def test_check_raises_address_not_allowed_with_a_message_for_the_model():
    with pytest.raises(AddressNotAllowed) as excinfo:
        DEFAULT_POLICY.check("10.1.2.3")
    assert str(excinfo.value) == "The address is not allowed: it resolves to a private network address (10.1.2.3)."
    assert excinfo.value.address == "10.1.2.3"


def test_check_passes_public_addresses():
    DEFAULT_POLICY.check("93.184.216.34")
    DEFAULT_POLICY.check(ipaddress.ip_address("2606:4700::6810:84e5"))


def test_check_accepts_address_objects_brackets_and_zones():
    assert not DEFAULT_POLICY.is_allowed(ipaddress.IPv4Address("127.0.0.1"))
    assert not DEFAULT_POLICY.is_allowed("[::1]")
    assert not DEFAULT_POLICY.is_allowed("fe80::1%eth0")


def test_garbage_is_a_value_error_not_an_allowance():
    with pytest.raises(ValueError):
        DEFAULT_POLICY.is_allowed("localhost")


def test_most_specific_row_wins_over_table_order():
    policy = AddressPolicy([
        ("10.0.0.0/8", False, "a private network address"),
        ("10.1.0.0/16", True, "an allowed corner"),
        ("0.0.0.0/0", True, "a public address"),
    ])
    assert policy.is_allowed("10.1.2.3")
    assert not policy.is_allowed("10.2.0.1")


def test_first_row_wins_among_equally_specific_rows():
    policy = AddressPolicy([Rule.of("10.0.0.0/8", False, "first"), Rule.of("10.0.0.0/8", True, "second")])
    assert policy.verdict("10.0.0.1") == (False, "first")


def test_address_no_row_covers_is_refused():
    policy = AddressPolicy([("8.8.8.0/24", True, "a resolver")])
    assert policy.is_allowed("8.8.8.8")
    assert not policy.is_allowed("9.9.9.9")
    assert not policy.is_allowed("2606:4700::1")


def test_overrides_let_one_loopback_address_stand_in_for_a_public_host():
    policy = AddressPolicy.with_overrides(allow=["127.0.0.1/32"], deny=["127.0.0.2/32"])
    assert policy.is_allowed("127.0.0.1")
    assert policy.is_allowed("::ffff:127.0.0.1")  # judged by the IPv4 it embeds, overrides included
    assert not policy.is_allowed("127.0.0.2")
    assert not policy.is_allowed("127.0.0.3")     # the rest of loopback keeps its default row
    assert not policy.is_allowed("10.0.0.1")
    assert policy.is_allowed("8.8.8.8")


def test_overrides_can_deny_a_public_address():
    policy = AddressPolicy.with_overrides(deny=["8.8.8.0/24"])
    assert not policy.is_allowed("8.8.8.8")
    assert "denied by an override" in policy.verdict("8.8.8.8").reason
    assert policy.is_allowed("8.8.4.4")


def test_deny_override_beats_allow_override_of_the_same_network():
    policy = AddressPolicy.with_overrides(allow=["127.0.0.1/32"], deny=["127.0.0.1/32"])
    assert not policy.is_allowed("127.0.0.1")


def test_default_policy_is_not_changed_by_overrides():
    AddressPolicy.with_overrides(allow=["127.0.0.0/8"])
    assert not DEFAULT_POLICY.is_allowed("127.0.0.1")
