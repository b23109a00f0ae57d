"""Guarded HTTP: the one place in webtools that opens URLs chosen by users or the model.

``client_for(allow_private_networks)`` gives the client a tool should use; ``HttpClient(policy=None)``
is the plain client for URLs an administrator configured. ``read_url`` is the one reading of a URL
that every check and the client share. See docs/security.md for the threat model.

The floor of the house: ``net`` may import the base only, nothing else of webtools. Inside, each of
``errors``, ``urls``, ``policy``, ``deadline``, ``connection``, ``proxy_upstream``, ``response``,
``client``, ``proxy`` imports only modules before it in this list.
"""
from __future__ import annotations

import logging

from .client import HttpClient, client_for
from .connection import system_resolver
from .deadline import CancelSignal
from .errors import (
    AddressNotAllowed,
    BodyTooLarge,
    Cancelled,
    ConnectionFailed,
    FetchTimeout,
    InvalidURL,
    NetError,
    RedirectNotAllowed,
    TooManyRedirects,
)
from .policy import DEFAULT_POLICY, DEFAULT_RULES, AddressPolicy, AllowList, Rule, Verdict
from .response import ACCEPTED_CODINGS, Response
from .urls import URL, QueryFreeLogs, display_url, displayed_urls, read_url

# urllib3 logs every request line, query included, at DEBUG; the query holds what users search for.
_URLLIB3 = logging.getLogger("urllib3.connectionpool")
if not any(isinstance(f, QueryFreeLogs) for f in _URLLIB3.filters):
    _URLLIB3.addFilter(QueryFreeLogs())

__all__ = [
    "ACCEPTED_CODINGS",
    "DEFAULT_POLICY",
    "DEFAULT_RULES",
    "AddressNotAllowed",
    "AddressPolicy",
    "AllowList",
    "BodyTooLarge",
    "CancelSignal",
    "Cancelled",
    "ConnectionFailed",
    "FetchTimeout",
    "HttpClient",
    "InvalidURL",
    "NetError",
    "RedirectNotAllowed",
    "Response",
    "Rule",
    "TooManyRedirects",
    "URL",
    "Verdict",
    "client_for",
    "display_url",
    "displayed_urls",
    "read_url",
    "system_resolver",
]
