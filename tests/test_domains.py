"""Domain list entries: what the options form accepts, how it stores them, which hosts they cover."""
from __future__ import annotations

import socket

import pytest
from django.core.exceptions import ValidationError

from webtools.plugins.web_fetch import WebFetchOptionsForm
from webtools.runtime.domains import (
    _suffix_extractor,
    host_matches,
    is_public_suffix,
    normalize_domain,
    refusal,
)
from webtools.net.urls import read_url


@pytest.mark.parametrize("entry, stored", [
    ("example.com", "example.com"),
    ("Docs.Example.COM", "docs.example.com"),
    ("example.com.", "example.com"),
    ("bücher.de", "xn--bcher-kva.de"),
    ("localhost", "localhost"),
    ("203.0.113.7", "203.0.113.7"),
])
def test_valid_entries_are_stored_lowercased_and_in_idna_form(entry, stored):
    assert normalize_domain(entry) == stored


@pytest.mark.parametrize("entry, code", [
    ("https://example.com", "scheme"),
    ("example.com/path", "path"),
    ("example.com:8080", "port"),
    ("*.example.com", "wildcard"),
    (".example.com", "wildcard"),
    ("exa mple.com", "invalid"),
    ("-bad-.com", "invalid"),
    ("under_score.com", "invalid"),
    ("1.2.3", "invalid"),
    ("0.0x", "invalid"),  # ends in a number, as URLs read it: an address or nothing, never this name
    ("a.0x1f", "invalid"),
    ("com", "public_suffix"),
    ("co.uk", "public_suffix"),
])
def test_invalid_entries_are_refused_with_a_reason(entry, code):
    with pytest.raises(ValidationError) as info:
        normalize_domain(entry)
    assert info.value.code == code


def test_invalid_domain_list_entries_fail_the_options_form():
    form = WebFetchOptionsForm(data={"deny_domains": "example.com\nhttps://evil.example/x\nco.uk"})
    assert not form.is_valid()
    messages = " ".join(form.errors["deny_domains"])
    assert "https://evil.example/x" in messages and "co.uk" in messages


def test_options_form_normalises_and_deduplicates_entries():
    form = WebFetchOptionsForm(data={"allow_domains": ["Example.com", "example.com", "bücher.de"]})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["allow_domains"] == ["example.com", "xn--bcher-kva.de"]


def test_options_form_fills_defaults_for_empty_fields():
    form = WebFetchOptionsForm(data={})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["max_characters"] == 20000
    assert form.cleaned_data["max_bytes"] == 5_000_000
    assert form.cleaned_data["max_file_bytes"] == 20_000_000
    assert form.cleaned_data["timeout_seconds"] == 20
    assert form.cleaned_data["allow_domains"] == []


def test_an_entry_covers_its_host_and_subdomains_only():
    assert host_matches("example.com", ["example.com"])
    assert host_matches("docs.example.com", ["example.com"])
    assert host_matches("a.b.example.com", ["example.com"])
    assert not host_matches("badexample.com", ["example.com"])
    assert not host_matches("example.com.evil.net", ["example.com"])
    assert not host_matches("4.203.0.113.7", ["203.0.113.7"])  # an address entry matches only itself


def test_deny_is_checked_before_allow():
    assert refusal("docs.example.com", ["example.com"], ["docs.example.com"])
    assert refusal("example.com", ["example.com"], ["docs.example.com"]) is None
    assert refusal("other.org", ["example.com"], []) is not None
    assert refusal("other.org", [], []) is None


def test_url_hosts_are_compared_in_idna_form():
    assert read_url("https://BÜCHER.de/x").host == "xn--bcher-kva.de"
    assert host_matches(read_url("http://shop.bücher.de:8080/").host, [normalize_domain("bücher.de")])


def test_public_suffix_list_is_the_bundled_snapshot_and_never_downloaded(monkeypatch):
    _suffix_extractor.cache_clear()

    def no_network(*args, **kwargs):
        raise AssertionError("tldextract tried to reach the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    extractor = _suffix_extractor()
    assert tuple(extractor.suffix_list_urls) == ()
    assert is_public_suffix("co.uk") and is_public_suffix("com")
    assert not is_public_suffix("example.co.uk")
    _suffix_extractor.cache_clear()
