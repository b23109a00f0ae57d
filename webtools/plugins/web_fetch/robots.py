"""robots.txt (RFC 9309): which group applies to our product token, and whether it allows a URL.

protego decides path rules (longest match wins, ``*`` and ``$``, allow wins a tie). A thin layer in
front of it does what protego does differently from RFC 9309 and Google's reference parser
(``google/robotstxt``, whose test suite ``tests/test_robots.py`` replays):

- Groups. Only ``user-agent``, ``allow`` and ``disallow`` lines shape a group (RFC 9309 2.1); an
  unknown line or a sitemap between ``user-agent`` lines does not end it.
- User agents. A ``user-agent`` value counts up to its first character outside ``[A-Za-z_-]``
  (``FOO BAR`` names the product ``FOO``), compared with our token without regard to case; every group
  naming us is merged (2.2.1), and ``*`` groups apply only when none names us.
- Encoding. A rule's non-ASCII characters are percent-encoded as UTF-8 and its escapes upper-cased
  (2.2.2); the URL is matched as it will be requested, and an escape is never decoded to compare it
  with a plain character (``%62`` is not ``b``).
- Lines longer than Google's limit (16,663 bytes) are cut, as its parser does.

Fetching follows 2.3.1: a 4xx answer means everything is allowed, a 5xx answer or an unreachable server
means nothing is, and up to 5 redirects are followed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from protego import Protego

if TYPE_CHECKING:
    from webtools.net import URL

#: Google's parser keeps at most 2083 * 8 bytes of a line, its terminator included.
MAX_LINE_BYTES = 2083 * 8 - 1
#: RFC 9309 2.5: crawlers must parse at least 500 KiB; the rest of a longer file is dropped.
MAX_ROBOTS_BYTES = 500 * 1024

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_PRODUCT = re.compile(r"[A-Za-z_-]*")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
# Key spellings Google's parser accepts, as prefixes of the key (it reads "useragent" and "dissallow").
_USER_AGENT_KEYS = ("user-agent", "useragent", "user agent")
_ALLOW_KEYS = ("allow",)
_DISALLOW_KEYS = ("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw")


def product_token(user_agent: str) -> str:
    """The product token of a User-Agent header: ``webtools`` for ``webtools (+https://...)``."""
    first = user_agent.strip().split(" ", 1)[0] if user_agent.strip() else ""
    return _PRODUCT.match(first).group(0) or "webtools"


def _split_line(line: str) -> tuple[str, str] | None:
    """The lowercased key and the value of a line, or None when it is not a ``key: value`` line."""
    line = line.split("#", 1)[0].strip()
    if not line:
        return None
    if ":" in line:
        key, value = line.split(":", 1)
    else:
        # A forgotten colon: "Disallow /x" is read when the line holds exactly two words.
        words = line.split()
        if len(words) != 2:
            return None
        key, value = words
    return key.strip().lower(), value.strip()


def _kind(key: str) -> str | None:
    if key.startswith(_USER_AGENT_KEYS):
        return "user-agent"
    if key.startswith(_DISALLOW_KEYS):
        return "disallow"
    if key.startswith(_ALLOW_KEYS):
        return "allow"
    return None


def _escape_pattern(pattern: str) -> str:
    """RFC 9309 2.2.2: non-ASCII characters as UTF-8 escapes, escapes in upper case."""
    pattern = _ESCAPE.sub(lambda m: "%" + m.group(1).upper(), pattern)
    if not pattern.isascii():
        pattern = "".join(ch if ch.isascii() else quote(ch, safe="") for ch in pattern)
    return pattern


def _protect_escapes(text: str) -> str:
    # protego decodes escapes before comparing, which would make "%62" equal "b". Escaping the "%"
    # itself, on both sides, keeps an escape a literal three-character sequence for protego.
    return text.replace("%", "%25")


def _cut(line: str) -> str:
    if len(line) * 4 <= MAX_LINE_BYTES:
        return line
    return line.encode("utf-8")[:MAX_LINE_BYTES].decode("utf-8", "ignore")


@dataclass
class RobotsRules:
    """The rules of one robots.txt that apply to one product token."""

    rules: list[tuple[str, str]]
    _parser: Protego | None = None

    @classmethod
    def parse(cls, text: str, token: str) -> RobotsRules:
        """Select and merge the groups of ``text`` that apply to ``token`` (``*`` groups otherwise)."""
        token = token.lower()
        specific: list[tuple[str, str]] = []
        generic: list[tuple[str, str]] = []
        named_us = False
        in_agents = False  # the previous significant line was a user-agent line
        current_specific = current_generic = False
        text = text.lstrip("\ufeff")
        for raw in _LINE_BREAK.split(text):
            parsed = _split_line(_cut(raw))
            if parsed is None:
                continue
            kind = _kind(parsed[0])
            value = parsed[1]
            if kind == "user-agent":
                if not in_agents:
                    current_specific = current_generic = False
                in_agents = True
                if value[:1] == "*" and (len(value) == 1 or value[1].isspace()):
                    current_generic = True
                elif _PRODUCT.match(value).group(0).lower() == token and token:
                    current_specific = named_us = True
            elif kind in ("allow", "disallow"):
                in_agents = False
                if not value:
                    continue
                rule = (kind, _escape_pattern(value))
                if current_specific:
                    specific.append(rule)
                if current_generic:
                    generic.append(rule)
        return cls(specific if named_us else generic)

    def _protego(self) -> Protego:
        if self._parser is None:
            lines = ["User-agent: *"]
            lines += [f"{kind}: {_protect_escapes(pattern)}" for kind, pattern in self.rules]
            self._parser = Protego.parse("\n".join(lines))
        return self._parser

    def allows(self, url: str) -> bool:
        """Whether the rules allow ``url``, matched as written: give it ``str(read_url(...))``, the
        form the request is sent in (non-ASCII characters encoded, escapes in upper case)."""
        if not self.rules:
            return True
        return self._protego().can_fetch(_protect_escapes(url), "*")


ALLOW_ALL = RobotsRules([])
DISALLOW_ALL = RobotsRules([("disallow", "/")])


def is_allowed(robots_txt: str, user_agent: str, url: str) -> bool:
    """Whether ``robots_txt`` lets the product ``user_agent`` fetch ``url``."""
    return RobotsRules.parse(robots_txt, user_agent).allows(url)


def robots_url(url: URL) -> str:
    """The robots.txt URL of ``url``'s origin (scheme, host and port, as the client connects to them)."""
    return f"{url.origin}/robots.txt"
