"""Domain lists, shared by every plugin that has them (web fetch's allow and deny lists, web search's
blocked domains and the model's ``allowed_domains``): what an entry may be, and which hosts it covers.

An entry is a host name. It covers that host and every subdomain (``example.com`` covers
``docs.example.com``, never ``badexample.com``). Entries are stored lowercased, Unicode names in their
IDNA (``xn--``) form, so that matching is a plain comparison of labels. A URL's host is compared as
``webtools.net.urls.read_url`` reads it (``read_url(url).host``), the host the client connects to,
never as another parser would read the URL; entries and URL hosts go through the same IDNA mapping.
"""
from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable
from django.core.exceptions import ValidationError

from webtools.net.errors import InvalidURL
from webtools.net.urls import ends_in_a_number, host_to_ascii

from .plugins import CommaListField

# RFC 1123 labels: letters, digits and hyphens, not starting or ending with a hyphen, 63 at most.
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)\Z")


@functools.lru_cache(maxsize=1)
def _suffix_extractor():
    import tldextract

    # suffix_list_urls=() and no cache directory: the snapshot bundled with tldextract is the only
    # source, so validating an entry never reaches the network or writes a cache file.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


def to_ascii_host(host: str) -> str:
    """``host`` lowercased and in its IDNA form; raises ``ValueError`` when it cannot be encoded."""
    try:
        return host_to_ascii(host.strip().rstrip("."))
    except InvalidURL as err:
        raise ValueError(str(err)) from err


def is_public_suffix(host: str) -> bool:
    """Whether ``host`` is itself a public suffix such as ``com`` or ``co.uk`` (bundled list, ICANN part)."""
    parts = _suffix_extractor()(host)
    return bool(parts.suffix) and not parts.domain


def registrable_domain(host: str) -> str | None:
    """The registrable domain of a host name (``example.co.uk`` for ``docs.example.co.uk``: the bundled
    list's ICANN part), or None for a public suffix or a name under none (``localhost``)."""
    return _suffix_extractor()(host).top_domain_under_public_suffix or None


def normalize_domain(entry: str, *, allow_public_suffix: bool = False) -> str:
    """The stored form of a domain list entry; raises ``ValidationError`` saying what is wrong.

    A bare public suffix (``com``, ``co.uk``) is refused in an operator's list, where it is almost
    always a mistake; ``allow_public_suffix`` accepts it where narrowing to one is meaningful (a model
    asking for results from ``gov`` only).
    """
    raw = entry.strip()
    if not raw:
        raise ValidationError("An entry is empty.", code="empty")
    if "://" in raw or raw.lower().startswith(("http:", "https:")):
        raise ValidationError(
            "“%(entry)s” is a URL: enter only the host name, such as example.com.",
            code="scheme", params={"entry": raw},
        )
    if "/" in raw or "?" in raw or "#" in raw:
        raise ValidationError(
            "“%(entry)s” has a path: enter only the host name, such as example.com.",
            code="path", params={"entry": raw},
        )
    if ":" in raw or "[" in raw:
        raise ValidationError(
            "“%(entry)s” has a port or is an IPv6 address: enter only a host name, such as example.com.",
            code="port", params={"entry": raw},
        )
    if raw.startswith(("*", ".")):
        raise ValidationError(
            "“%(entry)s”: leave out the wildcard; an entry already covers its subdomains.",
            code="wildcard", params={"entry": raw},
        )
    if "@" in raw or any(ch.isspace() for ch in raw):
        raise ValidationError("“%(entry)s” is not a host name.", code="invalid", params={"entry": raw})
    try:
        host = to_ascii_host(raw)
    except ValueError as err:
        raise ValidationError(
            "“%(entry)s” is not a valid host name.", code="invalid", params={"entry": raw}
        ) from err
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise ValidationError("“%(entry)s” is not a valid host name.", code="invalid", params={"entry": raw})
    if ends_in_a_number(host) and not _is_ipv4(host):
        # A URL reads such a host as an IPv4 address (or refuses it), so no URL would ever match it.
        raise ValidationError(
            "“%(entry)s” ends in a number, so URLs read it as an IPv4 address: enter a host name, or an "
            "address as four numbers such as 203.0.113.7.", code="invalid", params={"entry": raw},
        )
    if not allow_public_suffix and is_public_suffix(host):
        raise ValidationError(
            "“%(entry)s” is a public suffix shared by many unrelated sites; enter a domain under it.",
            code="public_suffix", params={"entry": raw},
        )
    return host


def _is_ipv4(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return False
    return True


def host_matches(host: str, entries: Iterable[str]) -> bool:
    """Whether an entry covers ``host``: the same host, or a subdomain of it (at a label boundary)."""
    host = host.rstrip(".").lower()
    for entry in entries:
        if host == entry or (host.endswith("." + entry) and not _is_ipv4(entry)):
            return True
    return False


def refusal(host: str, allow: Iterable[str], deny: Iterable[str]) -> str | None:
    """Why the lists refuse ``host`` (a ``URL.host``), or None when it may be fetched.

    Deny is checked first; a non-empty allow list refuses every host it does not cover.
    """
    allow = list(allow)
    if not host:
        return "the URL has no host"
    if host_matches(host, deny):
        return "the operator has blocked this domain"
    if allow and not host_matches(host, allow):
        return "the operator allows only some domains, and this is not one of them"
    return None


class DomainListField(CommaListField):
    """Host names, one per line: each lowercased, Unicode names in IDNA form, duplicates dropped."""

    def to_python(self, value):
        entries = super().to_python(value)
        out: list[str] = []
        errors: list[ValidationError] = []
        for entry in entries:
            try:
                host = normalize_domain(entry)
            except ValidationError as err:
                errors.append(err)
                continue
            if host not in out:
                out.append(host)
        if errors:
            raise ValidationError(errors)
        return out
