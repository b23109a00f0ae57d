"""Finding a secret in text in any spelling, with the standard library's decoders.

This is the tests' own reading, written apart from ``webtools.runtime.redaction`` and built on other
code (``html.unescape``, ``urllib.parse.unquote``, ``base64.b64decode``, ``binascii.unhexlify``), so
that a blind spot of the redactor is not shared by the check.

``spellings(key)`` gives the ways a server has been seen (or could be expected) to echo a key;
``leaks(text, key)`` names every one it finds in ``text``.
"""
from __future__ import annotations

import base64
import binascii
import html
import json
import re
import unicodedata
from urllib.parse import quote, unquote

#: A run of this many letters and digits of a key is a leak (shorter runs say little about a key).
RUN = 8

_B64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{11,}")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{16,}")


def spellings(key: str) -> dict[str, str]:
    """Spellings of ``key`` an error body might carry, by name."""
    raw = key.encode()
    return {
        "exact": key,
        "upper": key.upper(),
        "lower": key.lower(),
        "prefix and suffix": f"{key[:12]}...{key[-4:]}",
        "middle": key[9:27],
        "base64": base64.b64encode(raw).decode(),
        "base64 after user:": base64.b64encode(b"user:" + raw).decode(),
        "base64 after a byte, url-safe, unpadded": base64.urlsafe_b64encode(b"\xfe" + raw).decode().rstrip("="),
        "base64 after two bytes": base64.b64encode(b"ab" + raw + b"z").decode(),
        "base64 wrapped at 16": "\n".join(re.findall(".{1,16}", base64.b64encode(raw).decode())),
        "spaced": " ".join(key),
        "dotted": ".".join(key),
        "decimal entities": "".join(f"&#{ord(c)};" for c in key),
        "hex entities": "".join(f"&#x{ord(c):X};" for c in key),
        "html-escaped": html.escape(key),
        "percent": "".join(f"%{b:02x}" for b in raw),
        "quoted": quote(key, safe=""),
        "json escapes": json.dumps(key, ensure_ascii=True).replace(key[3], f"\\u{ord(key[3]):04x}"),
        "full-width": "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key),
        "hex": raw.hex(),
    }


def _alnum(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isascii() and c.isalnum())


def _runs(key: str) -> set[str]:
    folded = _alnum(key)
    return {folded[i:i + RUN] for i in range(len(folded) - RUN + 1)} or {folded}


def _decodings(text: str) -> dict[str, str]:
    unescaped = html.unescape(text)
    views = {
        "as is": text,
        "entities decoded": unescaped,
        "percent decoded": unquote(text),
        "entities then percent decoded": unquote(unescaped),
        "json escapes decoded": re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text),
    }
    return views


def _base64_payloads(text: str) -> list[bytes]:
    joined = re.sub(r"\s+", "", text)
    out = []
    for source in {text, joined}:
        for run in _B64_RUN.findall(source):
            for alphabet in (run, run.replace("-", "+").replace("_", "/")):
                for skip in range(4):
                    body = alphabet[skip:]
                    body = body[: len(body) - len(body) % 4]
                    try:
                        out.append(base64.b64decode(body, validate=False))
                    except (binascii.Error, ValueError):
                        continue
    return out


def _hex_payloads(text: str) -> list[bytes]:
    out = []
    for run in _HEX_RUN.findall(text):
        for skip in range(2):
            body = run[skip:]
            out.append(binascii.unhexlify(body[: len(body) - len(body) % 2]))
    return out


def leaks(text: str, key: str) -> list[str]:
    """How ``key`` (or a run of ``RUN`` of its letters and digits) shows in ``text``; empty when it does not."""
    runs = _runs(key)
    found = []
    for name, view in _decodings(text).items():
        folded = _alnum(view)
        if any(run in folded for run in runs):
            found.append(f"{name}: a run of the key, in some case or spacing")
        payloads = [("base64", p) for p in _base64_payloads(view)] + [("hex", p) for p in _hex_payloads(view)]
        for kind, payload in payloads:
            decoded = _alnum(payload.decode("latin-1"))
            if any(run in decoded for run in runs):
                found.append(f"{name}: {kind} of a run of the key")
                break
    return found


def assert_no_leak(text: str, *keys: str, where: str = "") -> None:
    for key in keys:
        found = leaks(text, key)
        assert not found, f"{key[:6]}... leaked in {where or 'text'}: {found}"
