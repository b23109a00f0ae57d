"""What the one reading of a URL costs: ``read_url`` against the parsers it stands on.

    .venv/bin/python bench/read_url.py [--rounds 200]

The URLs are every http(s) URL in the recorded engine answers (tests/fixtures/search), plus the same
URLs spelled the hard way (host upper-cased and percent-encoded, a default port, a dot segment). Prints
the median time per URL of ``read_url``, of ``urllib3.util.parse_url`` (which the client runs on every
request anyway) and of ``urllib.parse.urlsplit`` (what the checks used before). Never run as a test.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from urllib3.util import parse_url  # noqa: E402

from webtools.net import InvalidURL, read_url  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "search"


def corpus() -> list[str]:
    found: list[str] = []
    for path in sorted(FIXTURES.iterdir()):
        found += re.findall(r"https?://[^\s\"'<>\\]+", path.read_text(encoding="utf-8", errors="replace"))
    plain = list(dict.fromkeys(found))
    spelled = []
    for url in plain:
        scheme, _, rest = url.partition("://")
        host, slash, path = rest.partition("/")
        if ":" in host:
            continue
        odd = "".join(f"%{ord(c):02X}" if c in "aeiou" else c.upper() for c in host)
        spelled.append(f"{scheme}://{odd}:{443 if scheme == 'https' else 80}/./{path}")
    return plain + spelled


def per_url(fn, urls: list[str], rounds: int) -> float:
    """Median over ``rounds`` of the mean seconds per URL."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for url in urls:
            try:
                fn(url)
            except (InvalidURL, ValueError):
                pass
        samples.append((time.perf_counter() - start) / len(urls))
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    urls = corpus()
    refused = sum(1 for url in urls if _refused(url))
    print(f"{len(urls)} URLs ({refused} refused by read_url), median of {args.rounds} rounds, per URL:")
    # urlsplit keeps an lru_cache of its answers; repeated rounds would time the cache, not the parse.
    uncached_urlsplit = getattr(urlsplit, "__wrapped__", urlsplit)
    parsers = (("read_url", read_url), ("urllib3 parse_url", parse_url), ("urllib.parse urlsplit", uncached_urlsplit))
    for name, fn in parsers:
        print(f"  {name:22s} {per_url(fn, urls, args.rounds) * 1e6:8.1f} µs")


def _refused(url: str) -> bool:
    try:
        read_url(url)
    except InvalidURL:
        return True
    return False


if __name__ == "__main__":
    main()
