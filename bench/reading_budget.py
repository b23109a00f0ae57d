"""What hostile documents cost to read, without a reading budget and with web_fetch's.

    .venv/bin/python bench/reading_budget.py [--timeout 10] [--only NAME] [--skip-before]

The documents of issue 9, made here (``tests/pdfs.py``, ``tests/documents.py``):

- ``pdf``: a 24 KB PDF whose three pages share one 8 MB compressed content stream;
- ``table``: a 4.5 MB HTML page that is one table;
- ``feed``: a 4.3 MB RSS feed of 60 entries, each describing a 40 KB table (escaped);
- ``page5mb``: a 5 MB HTML table page, for the extraction target (5 MB within 3 s).

For each, two measurements, each in a fresh Python process so that peak memory is its own:

- before: the reading as it ran before the budget, in process, with no limit (pypdf's text of every
  page; ``extract``; ``feed_markdown``): wall time, CPU time, peak RSS;
- after: the real ``web_fetch`` tool against a loopback server with default options and
  ``timeout_seconds=--timeout`` (the issue measured 53 s of CPU for the PDF at 10): wall time of the
  call, what it returned, peak RSS of the calling process and of its reading workers.

Then the cost of the worker processes themselves: a cold call (a worker starts and imports the
extractor) and the median of warm calls on a small page, against the same extraction in process.
Never run as a test.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.documents import table_feed, table_page  # noqa: E402
from tests.pdfs import make_shared_stream_pdf  # noqa: E402

CASES = {
    "pdf": ("application/pdf", lambda: make_shared_stream_pdf(8_000_000, pages=3)),
    "table": ("text/html; charset=utf-8", lambda: table_page(4_500_000).encode()),
    "feed": ("application/rss+xml", lambda: table_feed(entries=60, entry_size=40_000).encode()),
    "page5mb": ("text/html; charset=utf-8", lambda: table_page(5_000_000).encode()),
}
SMALL_PAGE = "<html><head><title>Small</title></head><body><article>" + "<p>Some words of text.</p>" * 200


def _peak_mib(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def before(name: str) -> dict:
    """The reading as it ran before the budget: in process, nothing stops it."""
    mime, make = CASES[name]
    data = make()
    started, cpu = time.monotonic(), time.process_time()
    if name == "pdf":
        import io

        from pypdf import PdfReader

        text = "\n\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages)
    elif name == "feed":
        from webtools.plugins.web_fetch.feeds import feed_markdown

        text = feed_markdown(data.decode(), "http://bench.test/feed")[1]
    else:
        from webtools.plugins.web_fetch.extract import extract

        text = extract(data.decode(), "http://bench.test/page")[1]
    return {
        "seconds": time.monotonic() - started, "cpu": time.process_time() - cpu, "peak_mib": _peak_mib(),
        "result": f"{len(text)} characters", "bytes": len(data),
    }


def after(name: str, timeout: int) -> dict:
    """The real tool, default options but the timeout, against a loopback server."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")  # the options form needs settings
    django.setup()

    from tests.servers import LoopbackServer, Reply
    from tests.test_web_fetch import make_tool
    from webtools.net import AddressPolicy, HttpClient
    from webtools.plugins.pdf import PdfIngester
    from webtools.runtime import Ingesters, ToolError, workers
    from webtools.testing import tool_context_for_test

    mime, make = CASES[name]
    data = make()
    ingesters = Ingesters()
    ingesters.register(PdfIngester())
    tool = make_tool(timeout_seconds=timeout)
    policy = AddressPolicy.with_overrides(allow=["127.0.0.1/32"])
    with LoopbackServer({"/doc": Reply(200, {"Content-Type": mime}, data),
                         "/warm": Reply(200, {"Content-Type": "text/html"}, SMALL_PAGE)}) as server, \
            HttpClient(policy=policy, resolver=lambda host, port: ["127.0.0.1"]) as client:
        ctx, _ = tool_context_for_test(fetch=client, ingesters=ingesters)
        tool.handler({"url": server.url("/warm")}, ctx)  # a warm worker: its start is measured below
        started = time.monotonic()
        try:
            out = tool.handler({"url": server.url("/doc")}, ctx)
            result = f"{out['totalCharacters']} characters"
            if out["content"].startswith("["):
                result += ", " + out["content"].split("]", 1)[0] + "]"
            if out["totalCharacters"] > tool.handler.options.document_characters:
                result += ", cut at max_document_characters"
        except ToolError as err:
            result = f"error: {err}"
        seconds = time.monotonic() - started
    workers.shutdown()  # the workers are waited for, so their peak memory is counted below
    return {
        "seconds": seconds, "result": result, "peak_mib": _peak_mib(),
        "worker_peak_mib": _peak_mib(resource.RUSAGE_CHILDREN), "bytes": len(data),
    }


def worker_costs(runs: int = 50) -> dict:
    from webtools.plugins.web_fetch.extract import extract
    from webtools.runtime import Deadline, workers

    started = time.monotonic()
    workers.call(extract, SMALL_PAGE, "http://bench.test/", deadline=Deadline(60))
    cold = time.monotonic() - started
    through, direct = [], []
    for _ in range(runs):
        started = time.monotonic()
        workers.call(extract, SMALL_PAGE, "http://bench.test/", deadline=Deadline(60))
        through.append(time.monotonic() - started)
        started = time.monotonic()
        extract(SMALL_PAGE, "http://bench.test/")
        direct.append(time.monotonic() - started)
    workers.shutdown()
    return {"cold": cold, "warm": statistics.median(through), "direct": statistics.median(direct)}


def _in_child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=int, default=10)
    parser.add_argument("--only", choices=sorted(CASES))
    parser.add_argument("--skip-before", action="store_true", help="skip the unbounded runs (a minute or two)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, name = args.child
        result = before(name) if mode == "before" else worker_costs() if mode == "workers" else after(
            name, args.timeout)
        print(json.dumps(result))
        return
    print(f"web_fetch timeout_seconds={args.timeout}; each figure from a fresh process")
    print(f"{'document':9} {'size':>9}  {'before: wall':>12} {'cpu':>7} {'peak':>8}  {'after: wall':>11} "
          f"{'peak':>8} {'workers':>8}  after returned")
    for name in [args.only] if args.only else CASES:
        b = None if args.skip_before else _in_child("--child", "before", name)
        a = _in_child("--timeout", str(args.timeout), "--child", "after", name)
        before_cols = (f"{b['seconds']:11.1f}s {b['cpu']:6.1f}s {b['peak_mib']:5.0f}MiB" if b
                       else f"{'-':>12} {'-':>7} {'-':>8}")
        print(f"{name:9} {a['bytes']:9d}  {before_cols}  {a['seconds']:10.1f}s {a['peak_mib']:5.0f}MiB "
              f"{a['worker_peak_mib']:5.0f}MiB  {a['result']}")
    costs = _in_child("--child", "workers", "-")
    print(f"worker start (cold call, small page): {costs['cold'] * 1000:.0f} ms; warm call: "
          f"{costs['warm'] * 1000:.1f} ms, against {costs['direct'] * 1000:.1f} ms in process")


if __name__ == "__main__":
    main()
