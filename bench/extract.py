"""Benchmark of HTML extraction: webtools' extractor and trafilatura, side by side, in one run.

    .venv/bin/python bench/extract.py [--passes 3] [--only NAME]

Over ``../shared/corpora/readability-pages/*`` (130 real pages with the article Mozilla's Readability.js
extracts as ``expected.html``), for each extractor:

- F1: token-level F1 of the visible text against ``expected.html``'s, averaged over pages. Tokens are
  lowercased ``\\w+`` runs; Markdown syntax and the URLs of links and images are not counted.
- titles: how many titles equal ``expected-metadata.json``'s (whitespace collapsed, case ignored).
- chars: the output's characters (Markdown as returned, URLs included) over the expected text's
  characters (whitespace collapsed), summed over the corpus.
- pages/s: pages per second, the median of ``--passes`` timed passes after a warm-up pass.
- peak MiB: tracemalloc's peak over one pass.

trafilatura runs with Markdown output, links and tables kept and images dropped, the settings closest
to what web_fetch returns. It is a bench-only dependency (``bench/requirements.txt``).
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
import tracemalloc
import warnings
from collections import Counter
from pathlib import Path

import lxml.html

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "corpora" / "readability-pages"
# The URL Readability's own test suite gives these pages.
PAGE_URL = "http://fakehost/test/page.html"

_MD_LINK_URL = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_TOKEN = re.compile(r"\w+")


def visible_text(html: str) -> str:
    doc = lxml.html.fromstring(html)
    for bad in doc.xpath("//script|//style"):
        bad.drop_tree()
    return " ".join(" ".join(doc.itertext()).split())


def markdown_text(markdown: str) -> str:
    """What a reader sees of Markdown, for scoring: link and image URLs dropped."""
    text = _MD_LINK_URL.sub("]", markdown)
    return _AUTOLINK.sub(r"\1", text)


def f1(produced: str, expected: str) -> float:
    got = Counter(_TOKEN.findall(produced.lower()))
    want = Counter(_TOKEN.findall(expected.lower()))
    if not got and not want:
        return 1.0
    common = sum((got & want).values())
    if not common:
        return 0.0
    precision = common / sum(got.values())
    recall = common / sum(want.values())
    return 2 * precision * recall / (precision + recall)


def same_title(a: str | None, b: str | None) -> bool:
    return " ".join((a or "").split()).lower() == " ".join((b or "").split()).lower()


def load_pages(only: str | None = None):
    pages = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        if only and only != folder.name:
            continue
        source = (folder / "source.html").read_text(encoding="utf-8", errors="replace")
        expected = visible_text((folder / "expected.html").read_text(encoding="utf-8", errors="replace"))
        meta = json.loads((folder / "expected-metadata.json").read_text(encoding="utf-8"))
        pages.append((folder.name, source, expected, meta.get("title")))
    return pages


def ours(html: str) -> tuple[str | None, str]:
    from webtools.plugins.web_fetch.extract import extract

    return extract(html, PAGE_URL)


def trafilatura_extract(html: str) -> tuple[str | None, str]:
    import trafilatura

    out = trafilatura.extract(
        html, url=PAGE_URL, output_format="markdown", include_links=True, include_images=False,
        include_tables=True, include_comments=False, with_metadata=True,
    ) or ""
    title = None
    if out.startswith("---\n"):
        header, _, out = out[4:].partition("\n---\n")
        for line in header.splitlines():
            if line.startswith("title: "):
                title = line[len("title: "):].strip().strip('"')
    return title, out.strip()


EXTRACTORS = {"webtools": ours, "trafilatura": trafilatura_extract}


def measure(name, func, pages, passes):
    scores, titles, out_chars, want_chars = [], 0, 0, 0
    worst = []
    for page, source, expected, want_title in pages:
        title, text = func(source)
        score = f1(markdown_text(text), expected)
        scores.append(score)
        worst.append((score, page))
        titles += same_title(title, want_title)
        out_chars += len(text)
        want_chars += len(expected)
    rates = []
    for n in range(passes + 1):
        start = time.perf_counter()
        for _, source, _, _ in pages:
            func(source)
        if n:  # the first pass warms imports and caches
            rates.append(len(pages) / (time.perf_counter() - start))
    tracemalloc.start()
    for _, source, _, _ in pages:
        func(source)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "name": name,
        "f1": statistics.mean(scores),
        "titles": titles,
        "ratio": out_chars / max(want_chars, 1),
        "rate": statistics.median(rates),
        "peak": peak / 2**20,
        "worst": sorted(worst)[:8],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--only", help="one page folder")
    parser.add_argument("--worst", action="store_true", help="list each extractor's worst pages")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"Corpus not found: {CORPUS}")
    warnings.filterwarnings("ignore")
    import logging

    logging.disable(logging.CRITICAL)
    pages = load_pages(args.only)
    results = [measure(name, func, pages, args.passes) for name, func in EXTRACTORS.items()]
    print(f"{len(pages)} pages from {CORPUS}")
    print(f"{'extractor':<12} {'mean F1':>8} {'titles':>9} {'chars':>6} {'pages/s':>8} {'peak MiB':>9}")
    for r in results:
        print(
            f"{r['name']:<12} {r['f1']:8.3f} {r['titles']:>4}/{len(pages):<4} {r['ratio']:6.3f} "
            f"{r['rate']:8.1f} {r['peak']:9.1f}"
        )
    if args.worst:
        for r in results:
            print(r["name"], "worst:", ", ".join(f"{page} {score:.2f}" for score, page in r["worst"]))


if __name__ == "__main__":
    main()
