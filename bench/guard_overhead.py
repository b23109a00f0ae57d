"""What the SSRF guard costs: the guarded client against plain requests, same pages, same server.

    .venv/bin/python bench/guard_overhead.py [--runs-large 200] [--runs-small 1000]

A loopback server serves a 1 MB page and a small page; the guarded client (policy relaxed so that
127.0.0.1 stands in for a public host) and plain ``requests`` (a Session, so both keep connections
alive) fetch each page in alternating order, many times. Prints the median of each and the ratio.
Target: the guard adds at most 10% on the 1 MB page. Never run as a test.

The guarded client also reads bodies differently from requests (64 KB ``read1`` calls against
requests' 10 KB ``iter_content``), so a third line isolates the guard itself: the same client with
``policy=None``, i.e. the same code with the address checks switched off.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import requests  # noqa: E402

from tests.servers import LoopbackServer, Reply  # noqa: E402
from webtools.net import AddressPolicy, HttpClient  # noqa: E402

LARGE = bytes(range(256)) * 4096  # 1 MiB, not compressible by accident
SMALL = b"<!doctype html><title>small</title><p>" + b"hello " * 300 + b"</p>"


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def compare(name: str, url: str, size: int, runs: int, guarded: HttpClient, plain: requests.Session,
            peer: str = "plain requests") -> None:
    def guarded_fetch() -> None:
        assert len(guarded.request("GET", url, max_bytes=2 << 20).content) == size

    if isinstance(plain, HttpClient):
        def plain_fetch() -> None:
            assert len(plain.request("GET", url, max_bytes=2 << 20).content) == size
    else:
        def plain_fetch() -> None:
            assert len(plain.get(url, timeout=20).content) == size

    for _ in range(max(10, runs // 20)):  # warm up: connections, caches
        guarded_fetch()
        plain_fetch()
    g, p = [], []
    for i in range(runs):
        # Alternate which goes first so that drift (CPU frequency, the server's thread) hits both.
        if i % 2:
            g.append(timed(guarded_fetch))
            p.append(timed(plain_fetch))
        else:
            p.append(timed(plain_fetch))
            g.append(timed(guarded_fetch))
    gm, pm = statistics.median(g), statistics.median(p)
    print(f"{name:>10}  guarded client {gm * 1e3:7.3f} ms   {peer} {pm * 1e3:7.3f} ms   "
          f"ratio {gm / pm:5.3f}   ({runs} runs each, medians)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-large", type=int, default=200)
    parser.add_argument("--runs-small", type=int, default=1000)
    args = parser.parse_args()
    routes = {"/large": Reply(200, {"Content-Type": "application/octet-stream"}, LARGE),
              "/small": Reply(200, {"Content-Type": "text/html"}, SMALL)}
    with LoopbackServer(routes) as server:
        guarded = HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"]))
        plain = requests.Session()
        print(f"Python {sys.version.split()[0]}, requests {requests.__version__}, server {server.origin}")
        compare("1 MB page", server.url("/large"), len(LARGE), args.runs_large, guarded, plain)
        compare("small page", server.url("/small"), len(SMALL), args.runs_small, guarded, plain)
        unguarded = HttpClient(policy=None)
        peer = "same client, policy=None"
        compare("1 MB page", server.url("/large"), len(LARGE), args.runs_large, guarded, unguarded, peer)
        compare("small page", server.url("/small"), len(SMALL), args.runs_small, guarded, unguarded, peer)


if __name__ == "__main__":
    main()
