"""Benchmark of masking secrets in tool output: what the turn's redaction of every result costs.

    .venv/bin/python bench/redaction.py [--passes 5]

Over ``../shared/corpora/readability-pages/*`` (real pages), each page is extracted once (web_fetch's
``extract``) and its text cut to 20000 characters, as a web_fetch part. Then, as medians of
``--passes`` passes over the corpus, with three 36-character keys (an operator's, a user's, a model
server's, none of them in the pages):

- redact: ``redact_data`` on the page's output, which the turn runs after every successful call
  (every spelling of every key: case, runs of 8, base64, hex, spacing, escapes);
- the old rule: ``str.replace`` of each key verbatim, what masking did before;
- the peer: ``extract`` itself on the same pages, the CPU work a fetch already does.

It prints the per-page figures and the ratio of masking to extracting.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._pages import PAGE_URL, corpus_pages, fetch_outputs, timed  # noqa: E402
from webtools.plugins.web_fetch.extract import extract  # noqa: E402
from webtools.runtime.redaction import redact_data  # noqa: E402

KEYS = (
    "Wq4ZoPkEy7-Hd93Lx0Rb5Nc2Vt8Mf6Ja1Sg",
    "Yu2XvMeRk5-Tg71Qz9Pw3Bd6Ln0Hc4Fs8Kj",
    "Mx8KsLlMk3-Rj52Wn7Gd1Zq9Vb4Tp0Ce6Hy",
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    pages = corpus_pages()
    outputs = fetch_outputs(pages)
    characters = sum(len(o["content"]) for o in outputs)

    def redact_all():
        for output in outputs:
            redact_data(output, KEYS)

    def replace_all():
        for output in outputs:
            for value in output.values():
                if isinstance(value, str):
                    for key in KEYS:
                        value = value.replace(key, "[redacted]")

    def extract_all():
        for html in pages:
            extract(html, PAGE_URL)

    n = len(pages)
    t_redact = timed(args.passes, redact_all)
    t_replace = timed(args.passes, replace_all)
    t_extract = timed(args.passes, extract_all)
    print(f"{n} pages, {characters / n:.0f} characters of output a page, 3 keys, {args.passes} passes")
    per_character = t_redact / characters * 1e9
    print(f"redact (every spelling): {t_redact / n * 1000:.3f} ms a page ({per_character:.0f} ns a character)")
    print(f"old rule, str.replace:   {t_replace / n * 1000:.3f} ms a page")
    print(f"peer, extract:           {t_extract / n * 1000:.3f} ms a page")
    print(f"redacting / extracting:  {t_redact / t_extract:.3f}")


if __name__ == "__main__":
    main()
