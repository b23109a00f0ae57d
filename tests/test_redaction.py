"""Masking secrets: every spelling of a key an echoing server might use is masked, ordinary text is not.

The check is ``tests.leaks``, a separate reading built on the standard library's decoders.
"""
from __future__ import annotations

import html
import logging
import os
import string
from html.entities import html5

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webtools.net.urls import QueryFreeLogs
from webtools.runtime import excerpt, masked_in_logs, redact
from webtools.runtime.redaction import MASK, PARTIAL, Redactor, redact_data

from .leaks import leaks, spellings

KEY = "Qz7tAdm9-vK2pL8xR4nW6yB3cF5hJ1mN0sT"
OTHER = "Uk3rS7wQ-9dLm2Xp5Zt8Vb4Nc6Fh0Gj1HyR"


@pytest.mark.parametrize("name", list(spellings(KEY)))
def test_every_spelling_of_a_key_is_masked(name):
    text = f'{{"error": "Token {spellings(KEY)[name]} is not valid", "code": 401}}'
    masked = redact(text, [KEY])
    assert leaks(text, KEY), "the check must see the spelling before masking"
    assert not leaks(masked, KEY)
    assert masked.startswith('{"error": "Token ') and masked.endswith(' is not valid", "code": 401}')
    assert MASK in masked


def test_several_keys_in_one_text_are_all_masked():
    text = f"a={KEY.upper()} b={spellings(OTHER)['base64 after user:']} c={' '.join(OTHER)}"
    masked = redact(text, [KEY, OTHER])
    assert not leaks(masked, KEY) and not leaks(masked, OTHER)
    assert masked.startswith("a=") and " b=" in masked and " c=" in masked


def test_ordinary_text_is_left_alone():
    text = (
        "The Brave API key was rejected. See https://api.search.brave.com/app/keys?tab=1&x=%20 for help; "
        "&amp; &lt;b&gt; 100% naïve café — ＡＢＣ \\u00e9 \\x41. Tokens: admin, user, QzAdmin, K2pL."
    )
    assert redact(text, [KEY, OTHER]) == text


def test_a_run_shorter_than_the_partial_length_is_not_masked():
    assert redact(f"[{KEY[-(PARTIAL - 1):]}]", [KEY]) == f"[{KEY[-(PARTIAL - 1):]}]"
    assert redact(f"[{KEY[-PARTIAL:]}]", [KEY]) == f"[{MASK}]"


def test_a_short_secret_is_masked_only_whole_and_a_tiny_one_not_at_all():
    assert redact("pin 4a7c91 and 4a7c9", ["4a7c91"]) == f"pin {MASK} and 4a7c9"
    assert redact("abc", ["abc"]) == "abc"


def test_no_secrets_means_no_change():
    assert redact("anything at all", []) == "anything at all"
    assert redact("anything at all", ["", None]) == "anything at all"


def test_data_is_masked_in_every_string_keys_included():
    data = {"results": [{"title": f"about {KEY.lower()}", "url": "https://x.example/"}], KEY: 3, "n": 1}
    masked = redact_data(data, [KEY])
    assert masked == {"results": [{"title": f"about {MASK}", "url": "https://x.example/"}], MASK: 3, "n": 1}


def test_an_excerpt_masks_before_it_cuts():
    # Cutting first at 40 characters would leave 30 characters of the key for masking to miss.
    text = "x" * 10 + KEY + " tail " * 100
    cut = excerpt(text, [KEY], 40)
    assert cut.startswith("x" * 10 + MASK + " tail tail") and len(cut) == 40 and cut.endswith("…")


def test_a_long_text_without_the_key_is_returned_as_is():
    text = " ".join(["lorem ipsum dolor sit amet", "https://example.com/a?b=c", "&amp;", "100%"] * 5000)
    assert Redactor([KEY, OTHER])(text) is text


_KEYS = st.text(alphabet=string.ascii_letters + string.digits + string.punctuation, min_size=PARTIAL, max_size=80)
_AROUND = st.text(max_size=60)


@settings(max_examples=int(os.environ.get("REDACTION_EXAMPLES", 300)), deadline=None)
@given(key=_KEYS, before=_AROUND, after=_AROUND, name=st.sampled_from(sorted(spellings(KEY))))
def test_any_key_in_any_spelling_inside_any_text_is_masked(key, before, after, name):
    if sum(c.isalnum() for c in key) < PARTIAL + 4:
        key = key + "x9Q2k7Wm4z"  # spellings cut the key; keep enough of it to be a key
    text = before + spellings(key)[name] + after
    assert not leaks(redact(text, [key]), key)


@settings(max_examples=int(os.environ.get("REDACTION_EXAMPLES", 300)), deadline=None)
@given(key=_KEYS, text=st.text(max_size=200))
def test_text_holding_no_run_of_the_key_is_unchanged(key, text):
    if not leaks(text, key) and "&" not in text and "%" not in text and "\\" not in text:
        assert redact(text, [key]) == text


@pytest.mark.parametrize("text,key", [
    # Hypothesis found it: "%00" read as an escape hid two of eight zeros, read as it stands it does not.
    ("MDAwMDAwMDB4OVEyazdXbTR6000000%00", "00000000x9Q2k7Wm4z"),
    # A legacy entity without its semicolon, as browsers and html.unescape read it.
    ("abcd&ltefgh", "abcdefgh-1234"),
    # Hypothesis found it: "&lt;" must be decoded but "%01" is the key's own; neither "decode every
    # escape" nor "decode none" reads the key back.
    ("000000&lt;%01", "000000<%01"),
    ("000000&LT;%01", "000000<%01"),
    ("000000&#60;\\u0041", "000000<\\u0041"),
])
def test_a_key_is_found_whichever_way_an_escape_is_read(text, key):
    assert leaks(text, key) and not leaks(redact(text, [key]), key)


_PRINTABLE = "".join(chr(c) for c in range(0x20, 0x7F))
#: Every name a browser reads as each printable character (``&lt;``, ``&LT;``, ``&excl;``, ...).
_NAMES = {c: [name for name, value in html5.items() if value == c and name.endswith(";")] for c in _PRINTABLE}


@st.composite
def _html_escaped(draw, key):
    """``key`` with a random subset of its characters escaped as an HTML page might: ``html.escape``,
    decimal or hex (either case) references, or any name browsers accept for the character."""
    out = []
    for char in key:
        ways = ["as is", "html.escape", "decimal", "hex"] + (["named"] if _NAMES[char] else [])
        way = draw(st.sampled_from(ways))
        if way == "html.escape":
            out.append(html.escape(char))
        elif way == "decimal":
            out.append(f"&#{ord(char)};")
        elif way == "hex":
            x, digits = draw(st.sampled_from(["x", "X"])), draw(st.sampled_from([f"{ord(char):x}", f"{ord(char):X}"]))
            out.append(f"&#{x}{digits};")
        elif way == "named":
            out.append("&" + draw(st.sampled_from(_NAMES[char])))
        else:
            out.append(char)
    return "".join(out)


#: Printable-ASCII keys, some holding text shaped like an escape (``%01``, ``\\u0041``, ``&lt;``), which
#: must then be read as it stands while the page's own escapes around it are decoded.
_PRINTABLE_KEYS = st.lists(
    st.one_of(
        st.sampled_from(_PRINTABLE), st.sampled_from(["%01", "%4a", "\\u0041", "\\x41", "&lt;", "&#60;", "&amp"]),
    ),
    min_size=PARTIAL, max_size=30,
).map("".join)


def test_a_key_read_with_its_references_decoded_then_its_percent_escapes_is_masked():
    # Found by the test below: the page wrote the key's "1" of "%01" as "&#49;", and its first "&lt;" as
    # "&amp;lt;"; decoding the references, then the percent escapes (as an attribute's URL is read), brings
    # "lt" and "0\u0041" together: eight of the key's letters and digits in a row.
    key = "  &lt;%01&lt; 0\\u0041"
    text = "x   &amp;lt;%0&#49;&lt; 0\\u004&#49; y"
    assert leaks(text, key)
    assert not leaks(redact(text, [key]), key)
    assert redact(text, [key]).startswith("x   &amp;") and redact(text, [key]).endswith(" y")


@settings(max_examples=int(os.environ.get("REDACTION_EXAMPLES", 300)), deadline=None)
@given(data=st.data(), key=_PRINTABLE_KEYS, before=_AROUND, after=_AROUND)
def test_a_key_with_any_of_its_characters_html_escaped_is_masked(data, key, before, after):
    if sum(c.isalnum() for c in key) < PARTIAL:
        key = key + "x9Q2k7Wm"  # a key is found by its letters and digits; keep enough of them
    escaped = data.draw(_html_escaped(key), label="escaped")
    assert html.unescape(escaped) == key or "&" in key  # an unescaped "&" may start a reference
    text = before + escaped + after
    assert not leaks(redact(text, [key]), key)


# -- libraries' own logs ---------------------------------------------------------------------------

LOG_KEY = "log-key-0123456789abcdef"


def test_key_in_a_library_log_line_is_masked_while_the_block_runs(caplog):
    caplog.set_level(logging.DEBUG)
    library = logging.getLogger("urllib3.connectionpool")
    with masked_in_logs([LOG_KEY], "urllib3.connectionpool"):
        library.debug('%s "GET /search?q=x&api_key=%s HTTP/1.1" 200 7', "https://api.test:443", LOG_KEY)
    assert caplog.records and LOG_KEY not in caplog.text
    assert 'GET /search?q=x&api_key=[redacted] HTTP/1.1" 200 7' in caplog.text


def test_the_filter_is_gone_after_the_block_and_other_loggers_are_untouched(caplog):
    caplog.set_level(logging.DEBUG)
    with masked_in_logs([LOG_KEY], "urllib3.connectionpool"):
        logging.getLogger("elsewhere").debug("key %s", LOG_KEY)
    logging.getLogger("urllib3.connectionpool").debug("key %s", LOG_KEY)
    assert caplog.text.count(LOG_KEY) == 2
    # Only webtools.net's query filter, installed for good, stays.
    assert [type(f) for f in logging.getLogger("urllib3.connectionpool").filters] == [QueryFreeLogs]


def test_no_secrets_means_no_filter():
    with masked_in_logs(["", None], "urllib3.connectionpool"):
        assert [type(f) for f in logging.getLogger("urllib3.connectionpool").filters] == [QueryFreeLogs]
