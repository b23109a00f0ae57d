"""What rendering JavaScript costs: web_fetch with render_javascript never, auto and always, and the guard's
share of it against the same Chromium driven by plain Playwright with no proxy and no namespace.

    .venv/bin/python bench/render.py [--pages 8] [--passes 3] [--isolation netns]

A loopback server serves ``--pages`` static article pages and as many script-built ones (an empty root
element filled by a script). Each mode fetches all of them through the web_fetch tool, ``--passes`` times;
the figures are the median pass's pages per second, the share of script-built pages whose text came back,
and the browser's memory (PSS of all its processes) after the run. The peer line renders the same
script-built pages in the same browser binary with Playwright alone (no proxy, no namespace, no
extraction): the guard's and the extraction's cost is the difference. Needs root (network namespaces) and
Debian's chromium. Never run as a test.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import django  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
django.setup()

from tests.servers import LoopbackServer, Reply  # noqa: E402
from webtools.net import AddressPolicy, HttpClient  # noqa: E402
from webtools.plugins.web_fetch import WebFetchOptionsForm, WebFetchPlugin  # noqa: E402
from webtools.plugins.web_fetch import render  # noqa: E402
from webtools.runtime import Ingesters, PluginSetup, Registry  # noqa: E402
from webtools.testing import tool_context_for_test  # noqa: E402

PARAGRAPH = ("The harbour master's tide table for the week gives high water forty minutes after the pier "
             "gauge, and the spring tides of the month reach five metres on the third and the fourth. ")


def static_page(i: int) -> str:
    return (f"<html><head><title>Static {i}</title></head><body><article><h1>Static page {i}</h1>"
            f"<p>{PARAGRAPH * 6}</p></article><script>var a = {i};</script></body></html>")


def script_page(i: int) -> str:
    return (f"<html><head><title>App {i}</title></head><body><div id=\"root\"></div><script>"
            f"document.getElementById('root').innerHTML = '<article><h1>App page {i}</h1><p>' + "
            f"{PARAGRAPH!r}.repeat(6) + '</p></article>';</script></body></html>")


def tool(**options):
    plugin = WebFetchPlugin()
    form = WebFetchOptionsForm(data={**plugin.default_options(), "respect_robots_txt": False,
                                     "only_conversation_urls": False, **options})
    assert form.is_valid(), form.errors
    registry = Registry()
    plugin.setup(PluginSetup("web_fetch", form.cleaned_data, registry, Ingesters()))
    return registry.get("web_fetch").handler


def run_mode(mode: str, isolation: str, client: HttpClient, urls: list[str], script_urls: set[str],
             passes: int) -> tuple[float, float]:
    handler = tool(render_javascript=mode, render_isolation=isolation)
    rates, found = [], 0
    for _ in range(passes):
        found = 0
        started = time.perf_counter()
        for url in urls:
            ctx, _ = tool_context_for_test(fetch=client)
            output = handler({"url": url}, ctx)
            if url in script_urls and "App page" in output["content"]:
                found += 1
        rates.append(len(urls) / (time.perf_counter() - started))
    return statistics.median(rates), found / max(1, len(script_urls))


def peer(urls: list[str], passes: int) -> float:
    from playwright.sync_api import sync_playwright

    rates = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=render.DEFAULT_EXECUTABLE, headless=True,
                                    args=["--no-sandbox", *(f for f in render.BROWSER_FLAGS if "proxy" not in f)])
        for _ in range(passes):
            started = time.perf_counter()
            for url in urls:
                context = browser.new_context(service_workers="block")
                page = context.new_page()
                page.goto(url, wait_until="load")
                page.content()
                context.close()
            rates.append(len(urls) / (time.perf_counter() - started))
        browser.close()
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=8)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--isolation", choices=render.MODES, default="netns")
    args = parser.parse_args()
    with LoopbackServer() as server, \
            HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"])) as client:
        static_urls, script_urls = [], []
        for i in range(args.pages):
            server.route(f"/static/{i}", Reply(200, {"Content-Type": "text/html"}, static_page(i)))
            server.route(f"/app/{i}", Reply(200, {"Content-Type": "text/html"}, script_page(i)))
            static_urls.append(server.url(f"/static/{i}"))
            script_urls.append(server.url(f"/app/{i}"))
        urls = [u for pair in zip(static_urls, script_urls) for u in pair]
        print(f"{len(urls)} pages ({args.pages} static, {args.pages} script-built), median of {args.passes} "
              f"passes, isolation {args.isolation}")
        started = time.perf_counter()
        renderer = render.renderer_for(client, isolation=args.isolation)
        print(f"browser start (cold): {time.perf_counter() - started:.2f} s")
        for mode in ("never", "auto", "always"):
            rate, share = run_mode(mode, args.isolation, client, urls, set(script_urls), args.passes)
            print(f"web_fetch render_javascript={mode:6}: {rate:6.2f} pages/s, script-built pages read: "
                  f"{share:.0%}, browser memory {renderer.memory_bytes() / 2**20:.0f} MiB")
        singles = []
        for url in script_urls:
            started = time.perf_counter()
            renderer.render(url, timeout=10)
            singles.append(time.perf_counter() - started)
        print(f"one script-built page, warm pool: median {statistics.median(singles) * 1000:.0f} ms "
              f"(max {max(singles) * 1000:.0f} ms), memory cap {renderer.memory_cap / 2**20:.0f} MiB")
        render.close_all()
        rate = peer(script_urls, args.passes)
        print(f"peer: plain Playwright, same Chromium, no proxy or namespace, script-built pages only: "
              f"{rate:6.2f} pages/s")


if __name__ == "__main__":
    main()
