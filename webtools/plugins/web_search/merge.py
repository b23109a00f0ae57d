"""Merging the answers of several queries into one list: one entry per page, best first (pure functions).

``same_page(url)`` is the key two results of one page share: the URL as ``read_url`` reads it, its scheme
(http and https), a trailing slash of its path and its tracking parameters (``utm_*``, ``gclid``,
``fbclid``, ...) set aside. ``fuse(answers, count)`` merges ``(query, results)`` pairs by that key and
orders them by reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009: a page scores
``1 / (K + rank)`` in each list it is in, summed; ``K = 60``), each result with the ``queries`` that
found it. The first list's version of a page (title, snippet, URL) is kept: the one from the query that
ranked it best, the earlier query on a tie.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from webtools.net.errors import InvalidURL
from webtools.net.urls import read_url

__all__ = ["K", "fuse", "same_page"]

#: Reciprocal rank fusion's constant: the paper's, which damps the weight of the very first ranks.
K = 60
#: Query parameters that say where a click came from, never which page it is.
_TRACKING = re.compile(
    r"(?:utm_[a-z0-9_]*|gclid|gclsrc|dclid|gbraid|wbraid|fbclid|msclkid|yclid|twclid|ttclid|li_fat_id|igshid"
    r"|mc_cid|mc_eid|_hsenc|_hsmi|mkt_tok|vero_id|oly_anon_id|oly_enc_id|rb_clickid|s_cid|ref_src|srsltid)\Z",
    re.IGNORECASE,
)


def same_page(url: str) -> str:
    """The key of the page ``url`` names: host and port as ``read_url`` gives them, path without a
    trailing slash, the query without tracking parameters; the scheme left out."""
    try:
        read = read_url(url)
    except InvalidURL:
        return url
    path, _, query = read.target.partition("?")
    kept = [part for part in query.split("&") if part and not _TRACKING.match(part.partition("=")[0])]
    port = "" if read.port in (80, 443) else f":{read.port}"
    return f"{read.host}{port}{path.rstrip('/') or '/'}" + ("?" + "&".join(kept) if kept else "")


def fuse(answers: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], count: int) -> list[dict[str, Any]]:
    """The results of ``answers`` (``(query, results)`` pairs, each list best first, each result with a
    ``url``) merged by ``same_page``, ordered by reciprocal rank fusion, at most ``count``; each result a
    copy of its best-ranked version with ``queries``, the queries that found it in their order."""
    scores: dict[str, float] = {}
    best: dict[str, tuple[int, int, Mapping[str, Any]]] = {}  # key: (rank, list index, result)
    found_by: dict[str, list[str]] = {}
    for index, (query, results) in enumerate(answers):
        seen: set[str] = set()
        for rank, result in enumerate(results, 1):
            key = same_page(str(result["url"]))
            if key in seen:
                continue  # one list names a page once: its best rank counts
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (K + rank)
            if key not in best or (rank, index) < best[key][:2]:
                best[key] = (rank, index, result)
            queries = found_by.setdefault(key, [])
            if query not in queries:
                queries.append(query)
    order = sorted(scores, key=lambda key: (-scores[key], best[key][0], best[key][1]))
    return [{**best[key][2], "queries": found_by[key]} for key in order[:count]]
