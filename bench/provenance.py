"""Benchmark of URL provenance: what recording a fetched page's URLs costs, beside extracting the page.

    .venv/bin/python bench/provenance.py [--passes 5]

Over ``../shared/corpora/readability-pages/*`` (130 real pages), each page is extracted once (web_fetch's
``extract``, Markdown with links), then timed, as medians of ``--passes`` passes over the corpus:

- record: ``ConversationUrls.observe_output`` on the page's web_fetch output, which is what the turn
  does after every successful call (the URLs of the part the model sees, each in read_url's canonical
  form);
- check: ``url in record`` for every recorded URL (web_fetch's check before a fetch);
- the peer: ``extract`` itself on the same pages, the CPU work a fetch already does.

It prints the per-page figures and the ratio of recording to extracting.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._pages import PAGE_URL, corpus_pages, fetch_outputs, timed  # noqa: E402
from webtools.plugins.web_fetch.extract import extract  # noqa: E402
from webtools.runtime.provenance import ConversationUrls, urls_in  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    pages = corpus_pages()
    outputs = fetch_outputs(pages)
    found = [urls_in(o["content"]) for o in outputs]

    def record():
        for output in outputs:
            ConversationUrls().observe_output(output)

    records = []
    for output in outputs:
        seen = ConversationUrls()
        seen.observe_output(output)
        records.append(seen)

    def check():
        for seen, urls in zip(records, found):
            for url in urls:
                assert url in seen

    def extract_all():
        for html in pages:
            extract(html, PAGE_URL)

    n = len(pages)
    urls = sum(len(f) for f in found)
    t_record = timed(args.passes, record)
    t_check = timed(args.passes, check)
    t_extract = timed(args.passes, extract_all)
    print(f"{n} pages, {urls} distinct URLs in their first parts ({urls / n:.1f} a page), {args.passes} passes")
    print(f"record (observe_output): {t_record / n * 1000:.3f} ms a page")
    print(f"check (url in record):   {t_check / max(urls, 1) * 1e6:.1f} µs a URL")
    print(f"peer, extract:           {t_extract / n * 1000:.3f} ms a page")
    print(f"recording / extracting:  {t_record / t_extract:.3f}")


if __name__ == "__main__":
    main()
