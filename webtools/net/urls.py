"""One reading of a URL: the canonical form the guarded client connects to, and every check judges.

Parsers disagree about URLs: ``urllib.parse`` reads ``http://evil.com\\@example.com/`` as a URL for
``example.com`` (with user ``evil.com\\``), urllib3 and browsers read it as one for ``evil.com``; urllib
leaves ``http://%65vil.com/`` alone, urllib3 connects to ``evil.com``. A domain list or a robots.txt
check that reads a URL with one parser, while the socket is opened by another, checks a host nobody
connects to. So ``read_url`` is the only place in webtools that reads a URL string:

- It reads the authority itself, by RFC 3986, and refuses what parsers read differently: a backslash
  before the path (WHATWG and urllib3 end the host there, RFC 3986 and urllib do not), user info, control
  and whitespace characters, a port outside 1-65535, unbalanced IPv6 brackets, IPv6 zone ids.
- It decodes the host the way browsers do (WHATWG URL "host parsing"): percent escapes as UTF-8, then
  IDNA (UTS #46) mapping, which also folds full-width letters and dots; IPv4 in any of the forms
  ``inet_aton`` accepts (``127.1``, ``0x7f.0.0.1``, ``017700000001``) becomes its dotted quad, which is
  what ``getaddrinfo`` would have dialled. What cannot be decoded to a plain host name is refused, and
  so is a part ``0x`` with no digits (``0.0x``): browsers read it as 0, ``inet_aton`` refuses it and
  ``getaddrinfo`` then looks the host up in the DNS as a name.
- Path and query are normalised by urllib3's ``parse_url`` and ``requests``' re-quoting, the two
  steps the client applies on the way out; the fragment is dropped (it is never sent).
- The result is checked to be a fixed point of urllib3's parser: ``parse_url(str(url))`` gives back the
  same host, port and target, or the URL is refused. The client hands urllib3 exactly ``str(url)``, so
  the host every check judged is the host urllib3 connects to (tests/test_net_urls.py tests this
  against urllib3, requests and a real server's ``Host`` header, on generated URLs).

Every check takes a ``URL``: the address guard, the operator's domain lists, robots.txt's origin,
the turn cache key, citations and the search-result filters. Redirect targets are read with
``read_url(location, base=previous)``. See docs/security.md, "One reading of a URL".

May import ``errors`` only; ``display_url`` lives here (not in ``errors``) so that the arrow runs one
way.
"""
from __future__ import annotations

import ipaddress
import logging
import re
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes, urljoin

import idna
from requests.utils import requote_uri
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from .errors import InvalidURL

__all__ = [
    "DEFAULT_PORTS", "URL", "URL_IN_TEXT", "QueryFreeLogs", "display_url", "displayed_urls", "ends_in_a_number",
    "read_url",
]

DEFAULT_PORTS = {"http": 80, "https": 443}

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# C0 controls, DEL and C1 controls anywhere; browsers silently drop tab and newlines, other
# parsers keep them, so a URL that has any is read differently depending on who reads it.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_AUTHORITY = re.compile(r"[^/?#]*")
# After decoding and IDNA mapping, a host name is made of these; "_" appears in real host names.
_LABEL = re.compile(r"[a-z0-9_-]{1,63}\Z")
_DIGITS = re.compile(r"[0-9]+\Z")
_HEX = re.compile(r"0[xX][0-9A-Fa-f]*\Z")
_OCTAL = re.compile(r"0[0-7]+\Z")
_NOT_IPV4 = "The URL's host ends in a number, so it is read as an IPv4 address, and it is not a valid one."
_BARE_HEX = (
    "The URL's host has a part 0x with no digits after it; browsers read it as the number 0 and other "
    "clients as part of a name, so it is refused."
)


@dataclass(frozen=True)
class URL:
    """A URL as the guarded client connects to it (made by ``read_url`` only).

    ``host`` is lowercase ASCII: a DNS name in IDNA form without a trailing dot, a dotted-quad IPv4
    address, or an IPv6 address in its compressed form without brackets. ``port`` is always set (80
    or 443 when the URL named none). ``target`` is the request target, path and query, exactly as sent.
    ``str(url)`` is the canonical URL string.
    """

    scheme: str
    host: str
    port: int
    target: str

    @property
    def netloc(self) -> str:
        """``host[:port]`` as written in a URL: IPv6 in brackets, the scheme's default port left out."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def origin(self) -> str:
        """``scheme://host[:port]``: what robots.txt, cookies and credentials are scoped to."""
        return f"{self.scheme}://{self.netloc}"

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def is_ip(self) -> bool:
        """Whether the host is an IP address rather than a name."""
        return ":" in self.host or _DIGITS.match(self.host.rsplit(".", 1)[-1]) is not None

    def display(self) -> str:
        """``scheme://host[:port]/path``, the query left out (an admin-set engine URL can carry a key
        there) and a long path cut: what an error message may show."""
        path = self.path
        if len(path) > 200:
            path = path[:200] + "..."
        return self.origin + path

    def __str__(self) -> str:
        return self.origin + self.target


def display_url(url: str | URL) -> str:
    """``scheme://host[:port]/path`` of ``url`` (see ``URL.display``): what an error message may show.

    A URL with user info, which ``read_url`` refuses, is shown without it (an admin-set model server
    URL can carry credentials there); any other unreadable URL is not shown at all.
    """
    try:
        return read_url(url).display()
    except InvalidURL:
        pass
    if isinstance(url, str):
        scheme, sep, rest = url.strip().partition("://")
        authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        if sep and "@" in authority and "\\" not in authority:
            try:
                return read_url(f"{scheme}://{rest[authority.rindex('@') + 1:]}").display()
            except InvalidURL:
                pass
    return "(unreadable URL)"


#: An http(s) URL in running text, up to whitespace or a character no URL holds unescaped.
URL_IN_TEXT = re.compile(r"""https?://[^\s<>"'`\\^{}|]+""", re.I)


def displayed_urls(text: str) -> str:
    """``text`` with every http(s) URL in it shown as ``display_url`` shows one: without user info,
    query or fragment. What error messages, signals and logs pass through: a query may carry a share
    token or a session, and a message is copied into logs and audit events the user never sees."""
    if not isinstance(text, str) or "://" not in text:
        return text
    return URL_IN_TEXT.sub(lambda match: _displayed(match.group(0)), text)


def _displayed(url: str) -> str:
    # Sentence punctuation after a URL stays outside it, as provenance reads it.
    body = url.rstrip(".,;:!?)]*_'\"»”’")
    if not any(mark in body for mark in "?#@"):
        return url  # nothing to drop: the URL as it was written
    shown = display_url(body)
    return (shown if shown != "(unreadable URL)" else "(a URL)") + url[len(body):]


class QueryFreeLogs(logging.Filter):
    """Drops the query and fragment from the URLs and request targets a library logs (urllib3 writes
    each request line at DEBUG: ``"GET /search?q=my+private+question HTTP/1.1" 200``): queries carry
    what users search for, and keys. Installed on ``urllib3.connectionpool`` by ``webtools.net``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, str) and "?" in a for a in record.args):
            record.args = tuple(_target_without_query(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str) and "?" in record.msg and not record.args:
            record.msg = _target_without_query(record.msg)
        return True


def _target_without_query(text: str) -> str:
    """A request target or URL (``/path?q=...``, ``https://host/path?q=...``) with its query shown as
    ``?…``; any other text as it is, its http(s) URLs shown without query."""
    if text.startswith("/"):
        path, sep, _query = text.partition("?")
        return path.partition("#")[0] + ("?…" if sep else "")
    return displayed_urls(text)


def read_url(url: str | URL, *, base: URL | None = None) -> URL:
    """The canonical form of ``url`` (resolved against ``base`` when given, as a redirect's Location is),
    or ``InvalidURL`` saying, for the model, why it cannot be read unambiguously."""
    if isinstance(url, URL):  # already read, and absolute
        return url
    if not isinstance(url, str):
        raise InvalidURL("The URL must be a string.")
    # Surrounding spaces are how models and people paste URLs; inside, they are refused below.
    text = url.strip(" \t\r\n\f")
    if base is not None:
        if _CONTROL.search(text):
            raise InvalidURL("The URL contains a control character.")
        if text.startswith("//"):
            text = f"{base.scheme}:{text}"
        elif _SCHEME.match(text) is None or not text[text.index(":") + 1:].startswith("//"):
            # A relative reference (RFC 3986 5.2): the authority is the base's, so urljoin only
            # combines paths; an absolute URL is read as it is.
            text = urljoin(str(base), text)
    if _CONTROL.search(text):
        raise InvalidURL("The URL contains a control character.")
    found = _SCHEME.match(text)
    if found is None:
        raise InvalidURL("Only http and https URLs can be fetched; this one has no scheme (start it with https://).")
    scheme = found.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise InvalidURL(f"Only http and https URLs can be fetched, not {scheme}: URLs.")
    rest = text[found.end():]
    if not rest.startswith("//"):
        raise InvalidURL(f"The URL has no host: write it as {scheme}://host/path.")
    authority = _AUTHORITY.match(rest, 2).group(0)
    tail = rest[2 + len(authority):].split("#", 1)[0]
    host, port = _read_authority(authority, scheme)
    netloc_host = f"[{host}]" if ":" in host else host
    netloc = netloc_host if port == DEFAULT_PORTS[scheme] else f"{netloc_host}:{port}"
    # Path and query: urllib3 removes dot segments and encodes what may not appear; requests then
    # re-quotes (decodes unreserved escapes). Both run again on the way out; doing them here makes
    # the target what the server receives.
    parsed = _parse(f"{scheme}://{netloc}{tail}")
    target = parsed.path or "/"
    if parsed.query:  # requests drops an empty "?"
        target += "?" + parsed.query
    result = URL(scheme, host, port, requote_uri(target))
    _check_fixed_point(result)
    return result


def _read_authority(authority: str, scheme: str) -> tuple[str, int]:
    if "\\" in authority:
        raise InvalidURL(
            "The URL has a backslash before its path; some clients read it as the end of the host and "
            "others do not, so it is refused. Use / to start the path."
        )
    if "@" in authority:
        raise InvalidURL("URLs with a user name or password are not allowed.")
    if any(ch.isspace() for ch in authority):
        raise InvalidURL("The URL's host contains a space.")
    if authority.startswith("["):
        close = authority.find("]")
        if close == -1:
            raise InvalidURL("The URL's host has an opening [ without a closing ].")
        host = _read_ipv6(authority[1:close])
        port_text = authority[close + 1:]
        if port_text and not port_text.startswith(":"):
            raise InvalidURL("The URL has characters after its IPv6 address that are not a port.")
        port_text = port_text[1:]
    else:
        if "[" in authority or "]" in authority:
            raise InvalidURL("The URL's host has a [ or ] outside an IPv6 address in brackets.")
        host_text, _, port_text = authority.partition(":")
        if ":" in port_text:
            raise InvalidURL("An IPv6 address in a URL must be written in brackets, such as http://[2001:db8::1]/.")
        host = _read_host(host_text)
    return host, _read_port(port_text, scheme)


def _read_port(text: str, scheme: str) -> int:
    if not text:
        return DEFAULT_PORTS[scheme]
    if not text.isascii() or not text.isdigit():
        raise InvalidURL("The URL's port is not a number.")
    port = int(text)
    if not 1 <= port <= 65535:
        raise InvalidURL(f"The URL's port {port} is outside 1-65535.")
    return port


def _read_ipv6(text: str) -> str:
    if "%" in text:
        raise InvalidURL("IPv6 addresses with a zone (such as %eth0) are not allowed in URLs.")
    try:
        return str(ipaddress.IPv6Address(text))
    except ValueError:
        raise InvalidURL("The URL's host is not a valid IPv6 address.") from None


def _read_host(text: str) -> str:
    """A host name as browsers read it: percent escapes decoded as UTF-8, IDNA-mapped, IPv4 forms
    made dotted quads; refused when the result is not a plain host name."""
    if not text:
        raise InvalidURL("The URL has no host.")
    if "%" in text:
        try:
            text = unquote_to_bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidURL("The URL's host has percent escapes that are not UTF-8.") from None
        if _CONTROL.search(text) or any(ch.isspace() for ch in text):
            raise InvalidURL("The URL's host contains an encoded control character or space.")
    host = host_to_ascii(text)
    if host.endswith("."):
        host = host[:-1]
    labels = host.split(".")
    if ends_in_a_number(host):
        return _read_ipv4(labels)
    if len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise InvalidURL("The URL's host is not a valid host name.")
    return host


def host_to_ascii(host: str) -> str:
    """``host`` lowercased and in its IDNA (UTS #46) form, as both URLs and domain list entries are
    compared; raises ``InvalidURL`` when it cannot be mapped."""
    if host.isascii():
        return host.lower()
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        raise InvalidURL("The URL's host is not a valid internationalised domain name.") from None


def ends_in_a_number(host: str) -> bool:
    """Whether ``host`` (IDNA-mapped, without a trailing dot) is read as an IPv4 address: WHATWG URL's
    "ends in a number", its last label decimal digits or ``0x`` and hex digits. Domain list entries
    use it too, so that an entry is a host a URL can have."""
    last = host.rsplit(".", 1)[-1]
    return bool(_DIGITS.match(last) or _HEX.match(last))


def _read_ipv4(labels: list[str]) -> str:
    """WHATWG "IPv4 parser": up to four parts, each decimal, octal (leading 0) or hex (0x), the last
    filling the remaining bytes; what ``inet_aton`` and so ``getaddrinfo`` accept."""
    if len(labels) > 4:
        raise InvalidURL(_NOT_IPV4)
    numbers = []
    for label in labels:
        if _DIGITS.match(label) and not _OCTAL.match(label):
            if len(label) > 1 and label.startswith("0"):  # "08", "09": not octal, not decimal
                raise InvalidURL(_NOT_IPV4)
            numbers.append(int(label))
        elif _OCTAL.match(label):
            numbers.append(int(label, 8))
        elif _HEX.match(label):
            if len(label) == 2:
                raise InvalidURL(_BARE_HEX)
            numbers.append(int(label[2:], 16))
        else:
            raise InvalidURL(_NOT_IPV4)
    last = numbers.pop()
    if any(n > 255 for n in numbers) or last >= 256 ** (4 - len(numbers)):
        raise InvalidURL(_NOT_IPV4)
    value = last
    for i, n in enumerate(numbers):
        value += n << (8 * (3 - i))
    return str(ipaddress.IPv4Address(value))


def _parse(text: str):
    try:
        return parse_url(text)
    except LocationParseError:
        raise InvalidURL("The URL cannot be read.") from None


def _check_fixed_point(url: URL) -> None:
    """urllib3 must read ``str(url)`` as ``url``: the client hands it that string and nothing else."""
    again = _parse(str(url))
    host = (again.host or "").strip("[]")
    target = (again.path or "/") + ("?" + again.query if again.query else "")
    if (again.scheme, host, again.port or DEFAULT_PORTS[url.scheme], again.auth, target) != (
        url.scheme, url.host, url.port, None, url.target
    ):
        raise InvalidURL("The URL cannot be read unambiguously.")
