"""Guarded HTTP: the one place in webtools that opens URLs chosen by users or the model.

``client_for(allow_private_networks)`` gives the client a tool should use; ``HttpClient(policy=None)``
is the plain client for URLs an administrator configured. ``read_url`` is the one reading of a URL
that every check and the client share. See docs/security.md for the threat model.

The floor of the house: ``net`` may import the base only, nothing else of webtools. Inside, each of
``errors``, ``urls``, ``policy``, ``deadline``, ``connection``, ``proxy_upstream``, ``response``,
``client``, ``proxy`` imports only modules before it in this list.
"""
from __future__ import annotations

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
from .policy import DEFAULT_POLICY, DEFAULT_RULES, AddressPolicy, Rule, Verdict
from .response import ACCEPTED_CODINGS, Response
from .urls import URL, read_url

__all__ = [
    "ACCEPTED_CODINGS",
    "DEFAULT_POLICY",
    "DEFAULT_RULES",
    "AddressNotAllowed",
    "AddressPolicy",
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
    "read_url",
    "system_resolver",
]
