"""Which IP addresses a URL from a user or the model may reach: an explicit table.

Python's ``ipaddress.is_global`` is not enough on its own: in 3.11 it calls NAT64 ``64:ff9b::7f00:1``,
6to4 ``2002:7f00:1::``, IPv4-compatible ``::127.0.0.1``, site-local ``fec0::1``, multicast and
``192.0.0.192`` global. So the policy is a table of rows ``(network, allowed, reason)``; the most
specific row that contains an address decides (ties go to the earlier row), and the table is tested row
by row. IPv6 forms that carry an IPv4 address to a translator or tunnel are judged by the IPv4
address they carry, looked up in the same table.

Imports only ``errors``; ``connection`` asks it about every address.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Callable, Iterable, NamedTuple, Union

from .errors import AddressNotAllowed

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]
Embeds = Callable[[ipaddress.IPv6Address], "tuple[ipaddress.IPv4Address, ...]"]


def _v4(value: int) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(value & 0xFFFFFFFF)


def _bits(n: int, start: int, length: int) -> int:
    """``length`` bits of the 128-bit ``n`` starting at bit ``start`` (bit 0 is the most significant)."""
    return (n >> (128 - start - length)) & ((1 << length) - 1)


def embeds_last_32(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """IPv4-mapped, IPv4-compatible, SIIT and the NAT64 well-known /96: IPv4 in the low 32 bits."""
    return (_v4(int(ip)),)


def embeds_6to4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """6to4 (RFC 3056): ``2002:AABB:CCDD::/48`` tunnels to ``AA.BB.CC.DD``."""
    return (_v4(_bits(int(ip), 16, 32)),)


def embeds_teredo(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """Teredo (RFC 4380): the server address, and the client address stored inverted; both count."""
    n = int(ip)
    return (_v4(_bits(n, 32, 32)), _v4(~n))


def embeds_rfc6052_any(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """Local-use NAT64 ``64:ff9b:1::/48`` (RFC 8215): the operator picks the prefix length, so
    decode every RFC 6052 layout that fits (/48, /56, /64, /96) and refuse if any of them is refused.
    Bits 64-71 are the reserved "u" octet that the layouts skip."""
    n = int(ip)
    return (
        _v4(_bits(n, 48, 16) << 16 | _bits(n, 72, 16)),
        _v4(_bits(n, 56, 8) << 24 | _bits(n, 72, 24)),
        _v4(_bits(n, 72, 32)),
        _v4(_bits(n, 96, 32)),
    )


@dataclass(frozen=True)
class Rule:
    """One row of the table. A row with ``embeds`` defers to the IPv4 addresses it extracts; its
    ``reason`` names the IPv6 form (``allowed`` is then ignored)."""

    network: IPNetwork
    allowed: bool
    reason: str
    embeds: Embeds | None = None

    @classmethod
    def of(cls, network: str | IPNetwork, allowed: bool, reason: str, embeds: Embeds | None = None) -> Rule:
        return cls(ipaddress.ip_network(network), allowed, reason, embeds)


class Verdict(NamedTuple):
    allowed: bool
    reason: str


R = Rule.of

DEFAULT_RULES: tuple[Rule, ...] = (
    # --- IPv4 (IANA special-purpose registry, RFC 6890 and successors) ---
    R("0.0.0.0/8", False, "a 'this network' address"),                   # RFC 791; 0.0.0.0 is localhost
    R("10.0.0.0/8", False, "a private network address"),                  # RFC 1918
    R("100.64.0.0/10", False, "a carrier-grade NAT address"),             # RFC 6598
    R("127.0.0.0/8", False, "a loopback address"),                        # RFC 1122
    R("169.254.0.0/16", False, "a link-local address"),                   # RFC 3927
    # Cloud metadata and platform services, each named so a refusal says what was reached (sources in
    # docs/security.md). Only Azure's WireServer lies in otherwise public space.
    R("100.100.100.200/32", False, "a cloud metadata address"),           # Alibaba Cloud ECS
    R("168.63.129.16/32", False, "a cloud metadata address"),             # Azure WireServer
    R("169.254.0.23/32", False, "a cloud metadata address"),              # Tencent Cloud CVM
    R("169.254.42.42/32", False, "a cloud metadata address"),             # Scaleway
    R("169.254.169.254/32", False, "a cloud metadata address"),           # AWS, GCP, Azure, OCI, OpenStack...
    R("169.254.170.2/32", False, "a cloud metadata address"),             # AWS ECS task metadata
    R("169.254.170.23/32", False, "a cloud metadata address"),            # AWS EKS Pod Identity Agent
    R("192.0.0.192/32", False, "a cloud metadata address"),               # Oracle Cloud Classic
    R("172.16.0.0/12", False, "a private network address"),               # RFC 1918
    R("192.0.0.0/24", False, "an IETF protocol assignment address"),      # RFC 6890
    R("192.0.2.0/24", False, "a documentation address"),                  # RFC 5737 TEST-NET-1
    R("192.88.99.0/24", False, "a deprecated 6to4 relay address"),        # RFC 7526
    R("192.168.0.0/16", False, "a private network address"),              # RFC 1918
    R("198.18.0.0/15", False, "a benchmarking address"),                  # RFC 2544
    R("198.51.100.0/24", False, "a documentation address"),               # RFC 5737 TEST-NET-2
    R("203.0.113.0/24", False, "a documentation address"),                # RFC 5737 TEST-NET-3
    R("224.0.0.0/4", False, "a multicast address"),                       # RFC 5771
    R("240.0.0.0/4", False, "a reserved address"),                        # RFC 1112
    R("255.255.255.255/32", False, "the broadcast address"),              # RFC 919
    R("0.0.0.0/0", True, "a public address"),
    # --- IPv6 ---
    R("::/128", False, "the unspecified address"),                        # RFC 4291
    R("::1/128", False, "a loopback address"),                            # RFC 4291
    R("::/96", True, "an IPv4-compatible IPv6 address", embeds_last_32),  # RFC 4291 2.5.5.1 (deprecated)
    R("::ffff:0:0/96", True, "an IPv4-mapped IPv6 address", embeds_last_32),        # RFC 4291 2.5.5.2
    R("::ffff:0:0:0/96", True, "an IPv4-translated IPv6 address", embeds_last_32),  # RFC 2765 SIIT
    R("64:ff9b::/96", True, "a NAT64 address", embeds_last_32),           # RFC 6052 well-known prefix
    R("64:ff9b:1::/48", True, "a local-use NAT64 address", embeds_rfc6052_any),  # RFC 8215
    R("100::/64", False, "a discard-only address"),                       # RFC 6666
    R("2001::/23", False, "an IETF protocol assignment address"),         # RFC 2928
    R("2001::/32", True, "a Teredo address", embeds_teredo),              # RFC 4380
    R("2001:2::/48", False, "a benchmarking address"),                    # RFC 5180
    R("2001:db8::/32", False, "a documentation address"),                 # RFC 3849
    R("2002::/16", True, "a 6to4 address", embeds_6to4),                  # RFC 3056
    R("3fff::/20", False, "a documentation address"),                     # RFC 9637
    R("5f00::/16", False, "a segment routing address"),                   # RFC 9602
    R("fc00::/7", False, "a private network address"),                    # RFC 4193 unique local
    R("fd00:42::42/128", False, "a cloud metadata address"),              # Scaleway
    R("fd00:a9fe:a9fe::1/128", False, "a cloud metadata address"),        # Akamai (Linode)
    R("fd00:c1::a9fe:a9fe/128", False, "a cloud metadata address"),       # Oracle Cloud (OCI)
    R("fd00:ec2::23/128", False, "a cloud metadata address"),             # AWS EKS Pod Identity Agent
    R("fd00:ec2::254/128", False, "a cloud metadata address"),            # AWS instance metadata (IMDS)
    R("fd20:ce::254/128", False, "a cloud metadata address"),             # Google Compute Engine
    R("fe80::/10", False, "a link-local address"),                        # RFC 4291
    R("fe80::a9fe:a9fe/128", False, "a cloud metadata address"),          # OpenStack
    R("fec0::/10", False, "a site-local address"),                        # RFC 3879 (deprecated)
    R("ff00::/8", False, "a multicast address"),                          # RFC 4291
    R("2000::/3", True, "a public address"),                              # global unicast
    R("::/0", False, "an address outside global unicast"),
)
del R


def parse_address(ip: str | IPAddress) -> IPAddress:
    """An address object from a string (an IPv6 zone such as ``%eth0`` is dropped) or an address."""
    if isinstance(ip, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        address = ip
    else:
        address = ipaddress.ip_address(str(ip).split("%", 1)[0].strip("[]"))
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
        address = ipaddress.IPv6Address(int(address))
    return address


#: The reason of the rows that name a cloud metadata service: only an address named one by one in an
#: allow list lets one through.
METADATA = "a cloud metadata address"
#: A host name as an allow list may name one: labels of letters, digits, ``-`` and ``_``.
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_HOST_NAME = re.compile(rf"(?=.{{1,253}}\Z){_LABEL}(?:\.{_LABEL})*")


class AllowList:
    """The private addresses an operator lets the guarded client reach (``WEBTOOLS["ALLOW_ADDRESSES"]``):
    IP addresses and networks in CIDR notation (``10.20.0.0/16``), and exact host names
    (``wiki.intranet.example``).

    Checked after resolution, on every address the client would dial and on the connected peer, as
    every row of the table is: an address inside a listed network passes whatever name led to it; a
    listed host name's own addresses pass when the client connects to that name, and to no other.
    Cloud metadata addresses stay refused unless listed one by one (``169.254.169.254`` or
    ``169.254.169.254/32``): a network or a host name that covers one does not let it through.
    """

    def __init__(self, entries: Iterable[str]):
        self.entries = tuple(entries)
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        problems = []
        for entry in self.entries:
            text = str(entry).strip()
            try:
                networks.append(ipaddress.ip_network(text.strip("[]")))
                continue
            except ValueError:
                pass
            host = text.lower().rstrip(".")
            if "/" in text or ":" in text or not _HOST_NAME.fullmatch(host):
                problems.append(repr(entry))
            else:
                hosts.add(host)
        if problems:
            raise ValueError(f"{', '.join(problems)}: not an IP address, a network in CIDR notation "
                             "(host bits zero, as 10.20.0.0/16) nor a host name.")
        self.networks = tuple(networks)
        self.hosts = frozenset(hosts)

    def permits(self, address: IPAddress, host: str | None, reason: str) -> bool:
        """Whether the list lets ``address`` through, reached by the name ``host`` (None: unknown), the
        table having refused it for ``reason``."""
        if any(net.num_addresses == 1 and address in net for net in self.networks):
            return True  # named one by one
        if reason.startswith(METADATA):
            return False
        if any(address in net for net in self.networks):
            return True
        return host is not None and host.strip("[]").lower().rstrip(".") in self.hosts

    def __bool__(self) -> bool:
        return bool(self.entries)


class AddressPolicy:
    """An explicit, ordered table deciding which addresses may be reached.

    The most specific row containing the address wins; among rows of the same prefix length the
    earlier one does. Addresses no row contains are refused. ``allow_list`` (an ``AllowList``) then
    lets the operator's own private addresses through.
    """

    def __init__(self, rules: Iterable[Rule | tuple], allow_list: AllowList | None = None):
        self.rules: tuple[Rule, ...] = tuple(r if isinstance(r, Rule) else Rule.of(*r) for r in rules)
        self.allow_list = allow_list
        # {version: [(prefixlen, {network int: rule}), ...]} longest prefix first: one dict lookup
        # per distinct prefix length instead of a scan of every row.
        tables: dict[int, dict[int, dict[int, Rule]]] = {4: {}, 6: {}}
        for rule in self.rules:
            net = rule.network
            tables[net.version].setdefault(net.prefixlen, {}).setdefault(int(net.network_address), rule)
        self._lookup = {
            version: [(plen, (~((1 << (bits - plen)) - 1)) & ((1 << bits) - 1), rows)
                      for plen, rows in sorted(tables[version].items(), reverse=True)]
            for version, bits in ((4, 32), (6, 128))
        }

    @classmethod
    def with_overrides(cls, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> AddressPolicy:
        """The default table with extra rows ahead of it, e.g. ``allow=["127.0.0.1/32"]`` so a loopback
        test server stands in for a public host while ``deny`` rows stand in for private ones."""
        extra = [Rule.of(net, False, "an address denied by an override") for net in deny]
        extra += [Rule.of(net, True, "an address allowed by an override") for net in allow]
        return cls([*extra, *DEFAULT_RULES])

    def rule_for(self, ip: str | IPAddress) -> Rule | None:
        """The row that decides ``ip`` before any embedded IPv4 is looked at."""
        address = parse_address(ip)
        n = int(address)
        for _plen, mask, rows in self._lookup[address.version]:
            rule = rows.get(n & mask)
            if rule is not None:
                return rule
        return None

    def with_allow_list(self, entries: Iterable[str]) -> AddressPolicy:
        """This table with ``entries`` (``WEBTOOLS["ALLOW_ADDRESSES"]``) as its allow list; raises
        ``ValueError`` naming every entry that cannot be read."""
        return AddressPolicy(self.rules, AllowList(entries))

    def verdict(self, ip: str | IPAddress, host: str | None = None) -> Verdict:
        """Whether ``ip`` may be reached (by the name ``host``, when known), and a noun phrase saying
        what it is."""
        address = parse_address(ip)
        verdict = self._table_verdict(address)
        if not verdict.allowed and self.allow_list and self.allow_list.permits(address, host, verdict.reason):
            return Verdict(True, f"{verdict.reason} allowed by ALLOW_ADDRESSES")
        return verdict

    def _table_verdict(self, address: IPAddress) -> Verdict:
        rule = self.rule_for(address)
        if rule is None:
            return Verdict(False, "an address no rule allows")
        if rule.embeds is None:
            return Verdict(rule.allowed, rule.reason)
        for inner in rule.embeds(address):
            allowed, reason = self._table_verdict(inner)
            if not allowed:
                return Verdict(False, f"{reason} ({inner}) embedded in {rule.reason}")
        return Verdict(True, rule.reason)

    def is_allowed(self, ip: str | IPAddress) -> bool:
        return self.verdict(ip).allowed

    def check(self, ip: str | IPAddress) -> None:
        """Raise ``AddressNotAllowed`` unless ``ip`` may be reached."""
        allowed, reason = self.verdict(ip)
        if not allowed:
            raise AddressNotAllowed(str(parse_address(ip)), reason)

    def __repr__(self) -> str:
        allowed = f", {len(self.allow_list.entries)} allowed" if self.allow_list else ""
        return f"<AddressPolicy: {len(self.rules)} rules{allowed}>"


DEFAULT_POLICY = AddressPolicy(DEFAULT_RULES)
