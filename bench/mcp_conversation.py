"""Benchmark of the stateless MCP door (2026-07-28): what keeping a conversation in Django's cache costs.

    .venv/bin/python bench/mcp_conversation.py [--passes 5]

A stateless ``tools/call`` reads its conversation from Django's cache before the call and writes it back
after (``webtools.mcp.stateless.StoredConversation``): the URLs it has seen and its turn cache, whose
entries are the pages fetched in it. Over the readability corpus (``../shared/corpora``), conversations of
1, 5 and 20 fetched pages (each with every URL its text links to recorded as seen) are timed, as medians
of ``--passes`` passes, for one read and one write, with Django's in-process cache (the default) and
with Redis (a ``redis-server`` started here on a free port, when one is installed: the production set-up
of docs/deploy.md). The peer is what a session costs for the same (nothing: the conversation stays in
memory) and ``extract`` of one page of the corpus, the CPU work a fetch does anyway.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import anyio  # noqa: E402
import django  # noqa: E402

django.setup()

from bench._pages import PAGE_URL, corpus_pages, timed  # noqa: E402
from django.test.utils import override_settings  # noqa: E402
from webtools.mcp import stateless  # noqa: E402
from webtools.mcp.conversation import Conversation  # noqa: E402
from webtools.plugins.web_fetch.extract import extract  # noqa: E402
from webtools.plugins.web_fetch.tool import Page  # noqa: E402
from webtools.runtime.provenance import ConversationUrls  # noqa: E402


def conversation(pages: list[tuple[str, str]]) -> Conversation:
    urls = ConversationUrls()
    cache = {}
    for n, (title, text) in enumerate(pages):
        url = f"https://site{n}.example/page"
        urls.confirm(url)
        urls.observe(text)  # the page's links, as a fetch records them
        cache[("page", url)] = Page(url=url, title=title, text=text, retrieved_at="2026-12-01T00:00:00Z")
    return Conversation(lambda *args, **kw: None, urls=urls, turn_cache=cache)


def redis_server():
    """A redis-server on a free port in a temporary directory, or None when it is not installed."""
    if not shutil.which("redis-server"):
        return None, None
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    folder = tempfile.mkdtemp()
    process = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--dir", folder], stdout=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, f"redis://127.0.0.1:{port}/0"


def measure(passes: int, stored: stateless.StoredConversation, kept: Conversation) -> tuple[float, float, int]:
    import pickle

    from webtools.stores import cache

    def write():
        cache().delete(stored.key)  # each write starts from an empty entry, as the first call's does
        anyio.run(stored.save, kept)

    def read():
        anyio.run(stored.load, lambda *args, **kw: None)

    t_write = timed(passes, write)
    t_read = timed(passes, read)
    size = len(pickle.dumps(cache().get(stored.key), pickle.HIGHEST_PROTOCOL))
    return t_read, t_write, size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    html = corpus_pages()
    extracted = [extract(page, PAGE_URL) for page in html]
    t_extract = timed(args.passes, lambda: [extract(page, PAGE_URL) for page in html[:20]]) / 20
    process, redis_url = redis_server()
    backends = {"in-process (locmem)": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    if redis_url:
        backends["Redis"] = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
    else:
        print("redis-server is not installed: the in-process cache only")
    try:
        print(f"one page's extract (the peer, the CPU work of a fetch): {t_extract * 1000:.2f} ms")
        print("a session keeps its conversation in memory: 0 ms a call")
        for name, backend in backends.items():
            with override_settings(CACHES={"default": backend}):  # Django resets its caches for these
                for count in (1, 5, 20):
                    kept = conversation(extracted[:count])
                    stored = stateless.StoredConversation(1, f"bench-{count}")
                    t_read, t_write, size = measure(args.passes, stored, kept)
                    print(f"{name}, {count:>2} pages ({len(kept.urls):>4} URLs, {size / 1024:>6.0f} KiB pickled): "
                          f"read {t_read * 1000:6.2f} ms, write {t_write * 1000:6.2f} ms, "
                          f"together {(t_read + t_write) / t_extract:6.1%} of one extract")
    finally:
        if process is not None:
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
