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

Fetching (``fetch_rules``) follows 2.3.1: a 4xx answer means everything is allowed, a 5xx answer or an
unreachable robots.txt means nothing is (and the refusal says it could not be read, and why), and up to
5 redirects are followed; a site that cannot be reached at all is reported as such; it takes at most
``ROBOTS_TIMEOUT`` seconds and never more than what is left of the call's deadline.

Content signals, the site's wishes on how its pages are used once fetched, are read from the same
groups: ``Content-Signal`` lines (contentsignals.org: ``search``, ``ai-input``, ``ai-train`` set to
``yes`` or ``no``, optionally after a path) and the IETF AI-preferences ``Content-Usage`` rule
(draft-ietf-aipref-attach: a path, then ``train-ai``, ``ai-use`` or ``search`` set to ``y`` or ``n``).
Each line is a rule of its group, as ``allow`` is (so it ends the group's list of user agents); a signal
line before the first ``user-agent`` line belongs to no group and applies to every crawler.
Paths match as ``allow`` and ``disallow`` do; the longest matching path decides, and when several lines
share it, any ``no`` wins (aipref-vocab 7.1). web_fetch puts a page into an AI answer, which is what
``ai-input`` and ``ai-use`` name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote

from protego import Protego

from webtools.exceptions import URL_NOT_ACCESSIBLE
from webtools.net import (
    AddressNotAllowed,
    Cancelled,
    ConnectionFailed,
    FetchTimeout,
    NetError,
    TooManyRedirects,
    read_url,
)
from webtools.runtime import ToolCancelled, ToolError

from .extract import decode

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from webtools.net import URL, HttpClient
    from webtools.runtime import Deadline

#: robots.txt gets at most this long, and never more than what is left of the call's deadline.
ROBOTS_TIMEOUT = 10.0

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
#: The signal web_fetch's use is named by, per vocabulary, and how each vocabulary writes yes and no.
SIGNALS = {"content-signal": "ai-input", "content-usage": "ai-use"}
_ANSWERS = {"content-signal": {"yes": True, "no": False}, "content-usage": {"y": True, "n": False}}


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
    if key in SIGNALS:
        return key
    return None


@dataclass(frozen=True)
class Signal:
    """One content signal line: the vocabulary (``content-signal`` or ``content-usage``), the path
    pattern it applies to, and its answers (``{"ai-input": False, "search": True}``)."""

    vocabulary: str
    pattern: str
    answers: dict[str, bool]

    @classmethod
    def parse(cls, vocabulary: str, value: str) -> Signal | None:
        """The line's value: ``[path] key=value, key=value``; None when it states nothing readable.
        Unknown keys, unknown values and a key's parameters (``;...``, RFC 9651) are left out."""
        pattern = "/"
        if value.startswith("/"):
            pattern, _, value = value.partition(" ")
            if "\t" in pattern:
                pattern, _, rest = pattern.partition("\t")
                value = rest + " " + value
        answers = {}
        words = _ANSWERS[vocabulary]
        for item in value.split(","):
            key, _, answer = item.split(";", 1)[0].partition("=")
            answer = answer.strip().strip('"').lower()
            if key.strip() and answer in words:
                answers.setdefault(key.strip().lower(), words[answer])
        return cls(vocabulary, _escape_pattern(pattern), answers) if answers else None

    def describe(self, key: str) -> str:
        """``Content-Signal: ai-input=no``: the line as the model is told of it."""
        word = {v: k for k, v in _ANSWERS[self.vocabulary].items()}[self.answers[key]]
        return f"{self.vocabulary.title()}: {key}={word}"


def path_matches(pattern: str, target: str) -> bool:
    """Whether a robots.txt path pattern matches the request target ``path?query`` from its start
    (``*`` any run of characters, a final ``$`` the end). Google's matcher: the set of positions the
    pattern can have reached so far, so no pattern costs more than its length times the target's."""
    anchored = pattern.endswith("$")
    if anchored:
        pattern = pattern[:-1]
    positions = [0]
    for ch in pattern:
        if ch == "*":
            positions = list(range(positions[0], len(target) + 1))
        else:
            positions = [p + 1 for p in positions if p < len(target) and target[p] == ch]
            if not positions:
                return False
    return not anchored or positions[-1] == len(target)


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
    signals: list[Signal] = field(default_factory=list)
    #: Why the robots.txt could not be read, when it could not (the rules are then a full disallow).
    unread: str = ""
    #: When the site itself could not be reached: what happened, the whole message (a full disallow).
    unreached: str = ""

    @classmethod
    def unreadable(cls, why: str) -> RobotsRules:
        """RFC 9309 2.3.1.4: a robots.txt that cannot be read (a 5xx answer, an unreachable server)
        disallows every page; ``why`` says what happened, for the refusal's message."""
        return cls([("disallow", "/")], unread=why)

    @classmethod
    def site_unreachable(cls, message: str) -> RobotsRules:
        """The site could not be reached at all (no address, refused, reset, TLS): a full disallow
        whose refusal is ``message``, what happened, since robots.txt is not what stopped the fetch."""
        return cls([("disallow", "/")], unreached=message)

    def refusal(self, url: URL) -> str:
        """What the model is told when these rules do not allow ``url``."""
        if self.unreached:
            return self.unreached
        if self.unread:
            return (f"The robots.txt of {url.origin} could not be read ({self.unread}). A robots.txt that "
                    f"cannot be read counts as disallowing every page (RFC 9309), so {url} was not fetched; "
                    "it may be readable later.")
        return f"The robots.txt of {url.origin} does not allow fetching {url}."

    @classmethod
    def parse(cls, text: str, token: str) -> RobotsRules:
        """Select and merge the groups of ``text`` that apply to ``token`` (``*`` groups otherwise)."""
        token = token.lower()
        specific: list[tuple[str, str]] = []
        generic: list[tuple[str, str]] = []
        signals: dict[str, list[Signal]] = {"specific": [], "generic": [], "everyone": []}
        named_us = False
        seen_agents = False
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
                in_agents = seen_agents = True
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
            elif kind in SIGNALS:
                # A rule of its group (aipref-attach extends RFC 9309's ``rule``): it ends the list of
                # user agents, as an allow or disallow line does.
                in_agents = False
                signal = Signal.parse(kind, value)
                if signal is None:
                    continue
                if not seen_agents:
                    signals["everyone"].append(signal)
                if current_specific:
                    signals["specific"].append(signal)
                if current_generic:
                    signals["generic"].append(signal)
        chosen = signals["specific"] if named_us else signals["generic"]
        return cls(specific if named_us else generic, signals=signals["everyone"] + chosen)

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

    def signal_against(self, target: str) -> tuple[Signal, str] | None:
        """The signal line that asks that the page at ``target`` (``url.target``: path and query, as
        sent) not be put into an AI answer, and the key saying so; None when no line asks it.

        Per vocabulary, the lines with the longest pattern matching ``target`` decide, and among them
        any ``no`` wins."""
        for vocabulary, key in SIGNALS.items():
            best = -1
            against = None
            for signal in self.signals:
                if signal.vocabulary != vocabulary or key not in signal.answers:
                    continue
                if not path_matches(signal.pattern, target):
                    continue
                if len(signal.pattern) > best:
                    best, against = len(signal.pattern), None
                if len(signal.pattern) == best and not signal.answers[key] and against is None:
                    against = signal
            if against is not None:
                return against, key
        return None


ALLOW_ALL = RobotsRules([])


def is_allowed(robots_txt: str, user_agent: str, url: str) -> bool:
    """Whether ``robots_txt`` lets the product ``user_agent`` fetch ``url``."""
    return RobotsRules.parse(robots_txt, user_agent).allows(url)


def robots_url(url: URL) -> str:
    """The robots.txt URL of ``url``'s origin (scheme, host and port, as the client connects to them)."""
    return f"{url.origin}/robots.txt"


def signal_refusal(url: URL, signal: Signal, key: str, where: str) -> str:
    """What the model is told when the site asks that its page not be used in AI answers."""
    return (f"{url.display()} was not read: its site asks that its pages not be used as input to AI answers "
            f"({signal.describe(key)} in its {where}).")


def header_signal_against(headers) -> tuple[Signal, str] | None:
    """The ``Content-Signal`` or ``Content-Usage`` header of an answer that asks that it not be put
    into an AI answer, and the key saying so; None when neither asks it."""
    for vocabulary, key in SIGNALS.items():
        value = headers.get(vocabulary) or ""
        signal = Signal.parse(vocabulary, value.strip()) if value.strip() else None
        if signal is not None and signal.answers.get(key) is False:
            return signal, key
    return None


# -- pay per crawl ---------------------------------------------------------------------------------

#: What a price may look like to be repeated to the model: ``USD 0.01``, ``0.01 USD``, ``$0.01``.
_PRICE = re.compile(r"[\w .,$€£¥/:-]{1,40}")


def crawler_price(headers) -> str | None:
    """The price a 402 answer asks (``crawler-price``, Cloudflare's pay per crawl), when it has a
    readable one."""
    value = (headers.get("crawler-price") or "").strip()
    return value if _PRICE.fullmatch(value) else None


def payment_required(url: str, price: str | None) -> str:
    """What the model is told of a 402: the page asks to be paid for, and this tool never pays."""
    asked = f"it asks {price} for a crawl" if price else "it names no price"
    return (f"{url} could not be read: the site asks crawlers to pay (HTTP 402 Payment Required; {asked}), "
            "and this tool does not pay for pages.")


def time_left(deadline: Deadline, timeout: float) -> float:
    """What is left of the call's ``deadline`` (of ``timeout`` seconds) for its next stage; a tool error
    when nothing is, a cancelled turn's error when it was cancelled."""
    if deadline.signal is not None and deadline.signal.is_set():
        raise ToolCancelled()
    left = deadline.remaining()
    if left is not None and left <= 0.05:
        raise ToolError(f"The page could not be fetched within {timeout:g} seconds.", URL_NOT_ACCESSIBLE)
    return timeout if left is None else left


def fetch_rules(fetch: HttpClient, url: URL, user_agent: str, deadline: Deadline, timeout: float,
                sign: Callable[[URL], Mapping[str, str]] | None = None) -> RobotsRules:
    """The robots.txt rules of ``url``'s origin for ``user_agent``'s product token, fetched with the
    guarded client ``fetch`` within what is left of the call's ``deadline`` (of ``timeout`` seconds);
    ``sign`` signs each request as the page's are (Web Bot Auth).

    When the site itself cannot be reached (no address, refused, reset, TLS), the rules' refusal says
    what happened, not robots.txt; when only its robots.txt cannot be read, the refusal says why.
    Either way the rules disallow everything (RFC 9309 2.3.1.4)."""
    try:
        with fetch.follow(
            "GET", robots_url(url), max_redirects=5, headers={"User-Agent": user_agent},
            timeout=min(ROBOTS_TIMEOUT, time_left(deadline, timeout)), cancel=deadline.signal, sign=sign,
        ) as response:
            status = response.status_code
            if 400 <= status < 500:
                return ALLOW_ALL  # RFC 9309 2.3.1.3: "unavailable", crawl freely
            if status >= 300:
                return RobotsRules.unreadable(f"its server answered HTTP {status}")  # 2.3.1.4, 5xx included
            data = response.read(MAX_ROBOTS_BYTES, on_too_large="truncate")
    except Cancelled as err:
        raise ToolCancelled() from err
    except TooManyRedirects:
        return ALLOW_ALL  # 2.3.1.2: past five redirects robots.txt may count as unavailable
    except AddressNotAllowed as err:
        if err.url and read_url(err.url).origin == url.origin:
            # The site itself is private: say so, not that its robots.txt could not be read.
            raise ToolError(str(err.for_url(url)), err.code) from err
        return RobotsRules.unreadable("it redirects to an address that is not allowed")
    except ConnectionFailed as err:
        if err.url is None or err.url.origin == url.origin:
            return RobotsRules.site_unreachable(str(err.for_url(url)))  # that is the news, not robots.txt
        return RobotsRules.unreadable(f"it redirects to {err.url.origin}, which could not be reached")
    except FetchTimeout as err:
        if deadline.expired:
            # The call's time ran out, not the site's patience: say so, and remember nothing.
            raise ToolError(f"The page could not be fetched within {timeout:g} seconds (reading the "
                            f"robots.txt of {url.origin} took the rest).", URL_NOT_ACCESSIBLE) from err
        return RobotsRules.unreadable(f"it did not arrive within {ROBOTS_TIMEOUT:g} seconds")
    except NetError as err:
        return RobotsRules.unreadable(str(err).rstrip("."))
    return RobotsRules.parse(decode(data, response.charset), product_token(user_agent))
