"""What several benchmarks share: a median timer, and the readability corpus as web_fetch output."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "readability-pages"
PAGE_URL = "http://fakehost/test/page.html"


def timed(passes: int, work) -> float:
    """The median seconds of ``passes`` runs of ``work()``, after one warm-up run."""
    work()
    runs = []
    for _ in range(passes):
        started = time.perf_counter()
        work()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def corpus_pages() -> list[str]:
    """The HTML of every page of ``../shared/corpora/readability-pages``, in name order."""
    return [(p / "source.html").read_text(encoding="utf-8", errors="replace") for p in sorted(CORPUS.iterdir())
            if (p / "source.html").exists()]


def fetch_outputs(pages: list[str]) -> list[dict]:
    """Each page as web_fetch's output of its first part (title and up to 20,000 characters)."""
    from webtools.plugins.web_fetch.extract import extract

    outputs = []
    for html in pages:
        title, text = extract(html, PAGE_URL)
        outputs.append({"url": PAGE_URL, "title": title, "content": text[:20_000]})
    return outputs
