"""What hostile pages get out of the renderer (issue 20): how long a call lasts, how much memory the
browser's process tree takes, what reaches a denied host and which hosts the browser talks to.

    .venv/bin/python bench/render_hostile.py [--runs 3] [--isolation netns]

Each line prints the figure measured here and, as its peer, the figure the outside review measured on
the renderer before issue 20 (same machine class, Debian Chromium): ``while(true){}`` with a timeout of
8 s took 11-12.6 s; a page allocating 3 GiB before its load event took the browser to 3.4 GiB against
``render_memory_mb = 1024``; a 60 MiB script-built page with a timeout of 20 s took 24.5 s; a chain of
slow robots.txt files with a timeout of 8 s took 15.4 s; every render sent ``CONNECT www.google.com:443``.
Needs root (network namespaces, the memory cgroup) and Debian's chromium. Never run as a test.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import django  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
django.setup()

from tests.servers import LoopbackServer, Reply, raw, redirect, trickle  # noqa: E402
from webtools.net import AddressPolicy, HttpClient  # noqa: E402
from webtools.plugins.web_fetch import WebFetchOptionsForm, WebFetchPlugin, browser_process, render  # noqa: E402
from webtools.runtime import Ingesters, PluginSetup, Registry, ToolError  # noqa: E402
from webtools.testing import tool_context_for_test  # noqa: E402


def page(body: str) -> Reply:
    return Reply(200, {"Content-Type": "text/html"}, f"<html><body>{body}</body></html>")


SPIN = page('<div id="root"></div><script>while (true) {}</script>')
HOG = page('<div id="root"></div><script>const keep = []; for (let i = 0; i < 60; i++) '
           '{ const a = new Uint8Array(50e6); a.fill(i + 1); keep.push(a); }</script>')
HUGE = page('<div id="root"></div><script>const row = "<p>" + "word ".repeat(200) + "</p>"; '
            'document.getElementById("root").innerHTML = row.repeat(60 * 1024 * 1024 / row.length);</script>')
SCRIPT_BUILT = page('<div id="root"></div><script>document.getElementById("root").innerHTML = '
                    '"<article><p>" + "A page its script builds. ".repeat(40) + "</p></article>";</script>')


def tool(**options):
    plugin = WebFetchPlugin()
    form = WebFetchOptionsForm(data={**plugin.default_options(), "only_conversation_urls": False, **options})
    assert form.is_valid(), form.errors
    registry = Registry()
    plugin.setup(PluginSetup("web_fetch", form.cleaned_data, registry, Ingesters()))
    return registry.get("web_fetch").handler


def timed(client, url: str, **options) -> tuple[float, str]:
    ctx, _ = tool_context_for_test(fetch=client)
    started = time.monotonic()
    try:
        tool(**options)({"url": url}, ctx)
        outcome = "rendered"
    except ToolError as err:
        outcome = str(err)
    return time.monotonic() - started, outcome


def private_bytes(renderer: render.Renderer) -> int:
    """Anonymous and shared-memory PSS of the browser's tree (the binary's file pages left out)."""
    try:
        with open(renderer._pid_file) as f:
            root = int(f.read())
    except (OSError, ValueError):
        return 0
    return browser_process.tree_pss_bytes(root, ("Pss_Anon", "Pss_Shmem"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--isolation", choices=render.MODES, default="netns")
    args = parser.parse_args()
    common = {"render_javascript": "always", "render_isolation": args.isolation}
    with LoopbackServer() as server, HttpClient(policy=AddressPolicy.with_overrides(allow=["127.0.0.1/32"]),
                                                resolver=lambda host, port: ["127.0.0.1"]) as client:
        site = f"http://site.test:{server.port}"
        for path, reply in (("/spin", SPIN), ("/hog", HOG), ("/huge", HUGE), ("/app", SCRIPT_BUILT),
                            ("/secret", page("denied")), ("/go", redirect(f"http://denied.test:{server.port}/secret"))):
            server.route(path, reply)
        server.route("/leave", page('<div id="root"></div><script>location.href = "/go"</script>'))
        renderer = render.renderer_for(client, isolation=args.isolation)
        capped_by = f"cgroup v{renderer.cgroup.version}" if renderer.cgroup else "sampler"
        print(f"isolation {args.isolation}, memory cap by {capped_by}, {args.runs} runs each")
        timed(client, f"{site}/app", **common)  # warm

        took = [timed(client, f"{site}/spin", timeout_seconds=8, **common) for _ in range(args.runs)]
        print(f"while(true){{}}, timeout 8 s: {min(t for t, _ in took):.2f}-{max(t for t, _ in took):.2f} s "
              f"({took[0][1]!r}); peer (before): 11-12.6 s")

        took = [timed(client, f"{site}/huge", timeout_seconds=20, **common) for _ in range(args.runs)]
        print(f"60 MiB script-built page, timeout 20 s: {min(t for t, _ in took):.2f}-{max(t for t, _ in took):.2f} s "
              f"({took[0][1][:60]!r}); peer (before): 24.5 s")

        peaks, cgroup_peaks, errors = [], [], []
        for _ in range(args.runs):
            peak, stop = [0], threading.Event()

            def sample():
                while not stop.is_set():
                    peak[0] = max(peak[0], private_bytes(renderer))
                    time.sleep(0.01)

            sampler = threading.Thread(target=sample)
            sampler.start()
            if renderer.cgroup:
                renderer.cgroup.reset_peak()
            seconds, outcome = timed(client, f"{site}/hog", timeout_seconds=20, **common)
            stop.set()
            sampler.join()
            peaks.append(peak[0])
            cgroup_peaks.append(renderer.cgroup.peak() if renderer.cgroup else 0)
            errors.append((seconds, outcome))
        after, _ = timed(client, f"{site}/app", **common)
        print(f"3 GiB page, cap {renderer.memory_cap_mb} MiB: tree peak {max(peaks) / 2**20:.0f} MiB (private PSS, "
              f"sampled every 10 ms), cgroup peak {max(cgroup_peaks) / 2**20:.0f} MiB, ended in "
              f"{max(s for s, _ in errors):.2f} s with {errors[0][1]!r}; browser restarts {renderer.restarts}, "
              f"next page {after:.2f} s; peer (before): 3.4 GiB")

        hits = server.hits("/secret")
        _, outcome = timed(client, f"{site}/leave", deny_domains="denied.test", **common)
        print(f"script navigation to a 302 to a denied host: {outcome!r}; requests that reached the denied "
              f"host: {server.hits('/secret') - hits}; peer (before): the denied page's content was returned")
        render.close_all()

        fresh = render.Renderer(client.clone(), mode=args.isolation)
        fresh.render(f"{site}/app", timeout=10)
        time.sleep(3)
        hosts = sorted({e.target.split("://")[-1].split("/")[0] for e in fresh.proxy.rules.events})
        connects = [e for e in fresh.proxy.rules.events if e.method == "CONNECT"]
        fresh.close()
        print(f"a fresh browser, one render and 3 s: hosts that reached the proxy {hosts}, CONNECTs "
              f"{len(connects)}; peer (before): CONNECT www.google.com:443 every render, and at start-up "
              "update.googleapis.com and accounts.google.com (measured here before the dead browser proxy)")

        slow = trickle(b"User-agent: *\nAllow: /\n#" + b"." * 60, delay=0.05, headers={"Content-Type": "text/plain"})

        def robots_txt(request, handler):
            slow.fn(request, handler)

        server.route("/robots.txt", raw(robots_txt))
        server.route("/hop", lambda request: redirect(
            f"http://{'b' if request.headers['Host'].startswith('a') else 'a'}{int(time.time() * 1000)}"
            f".test:{server.port}/hop"))
        took = [timed(client, f"http://a.test:{server.port}/hop", timeout_seconds=8, respect_robots_txt=True)
                for _ in range(args.runs)]
        print(f"redirects to new origins with slow robots.txt, timeout 8 s: {max(t for t, _ in took):.2f} s "
              f"({took[0][1][:70]!r}); peer (before): 15.4 s")


if __name__ == "__main__":
    main()
