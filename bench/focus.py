"""Benchmark of web_fetch's ``query``: does the first part hold the answer, and what does ranking cost?

    .venv/bin/python bench/focus.py [--tokens 1000] [--min-characters 12000] [--passes 3] [--show N]

Pages (read in place from ``../shared/corpora``): the ``documentation`` pages of ``wcxb-dev`` and every
page of ``readability-pages``, extracted as web_fetch extracts them, kept when their text has at least
``--min-characters`` characters (so that the answer lies far beyond the first part).

Questions, made mechanically, one per page: among the page's prose sentences (8 to 40 words, in a
paragraph, not in code, a table or a heading) that start in the last 40% of its text and occur once in
it, one is drawn by a generator seeded with the page's id. Its *answer word* is the sentence's word that
is rarest on the page (the most specific; ties: the last), and the question is the sentence without it
(``full``); harder ones keep only four (``4 words``) or two (``2 words``) of the sentence's other
content words (not stop words), drawn the same way. A page *hits* when the first part web_fetch returns
for ``{"query": question, "max_content_tokens": --tokens}`` holds the whole sentence (whitespace aside),
answer word included. The peer is the first part without ``query``: the page read in order. Every part
is checked against the token cap (``parts over the token cap`` must be 0).

Every fifth page (by corpus and id order) is *kept out*: nothing in ``focus.py`` was tuned on it, and
its figures are printed apart.

Cost: the CPU time (``time.process_time``, the median of ``--passes``) of ranking (``focus()``) beside
extraction (``extract()``) on the same pages, per page and in total.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# ``shared/corpora`` beside the project, or beside the folder of worktrees it is in.
CORPORA = next((p / "shared" / "corpora" for p in ROOT.parents if (p / "shared" / "corpora").is_dir()),
               ROOT.parent / "shared" / "corpora")
WCXB = CORPORA / "wcxb-dev"
READABILITY = CORPORA / "readability-pages"
KEPT_OUT = 5
_WORD = re.compile(r"\w+")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?](?=\s|$)")
_LINK_URL = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*\)")


@dataclass
class Case:
    name: str
    html: str
    url: str
    text: str = ""
    title: str | None = None
    language: str | None = None
    sentence: str = ""
    full: str = ""
    sparse: str = ""
    pair: str = ""
    kept_out: bool = False


def load() -> list[Case]:
    cases = []
    manifest = json.loads((WCXB / "manifest.json").read_text())
    for entry in sorted(manifest, key=lambda e: e["id"]):
        if entry["page_type"] == "documentation":
            html = gzip.open(WCXB / "html" / f"{entry['id']}.html.gz").read().decode("utf-8", "replace")
            cases.append(Case(f"wcxb/{entry['id']}", html, entry["url"]))
    for folder in sorted(READABILITY.iterdir()):
        if (folder / "source.html").exists():
            html = (folder / "source.html").read_text(encoding="utf-8", errors="replace")
            cases.append(Case(f"readability/{folder.name}", html, "http://fakehost/test/page.html"))
    return cases


def normal(text: str) -> str:
    return " ".join(text.split())


def prose_blocks(text: str):
    """``(start, block)`` of each paragraph of the Markdown that is prose: not code, a table, a heading
    or a list."""
    position = 0
    fence = False
    for block in re.split(r"(\n\s*\n)", text):
        start, position = position, position + len(block)
        if block.count("```") % 2:
            fence = not fence
            continue
        stripped = block.strip()
        if fence or not stripped or stripped[0] in "#|>-*`[" or "```" in block or "|" in block:
            continue
        yield start, block


def make_question(case: Case, stop: frozenset[str]) -> bool:
    text = case.text
    frequency: dict[str, int] = {}
    for word in _WORD.findall(_LINK_URL.sub("]", text).lower()):
        frequency[word] = frequency.get(word, 0) + 1
    eligible = []
    for start, block in prose_blocks(text):
        for match in _SENTENCE.finditer(block):
            sentence = match.group().strip()
            words = _WORD.findall(_LINK_URL.sub("]", sentence))
            if start + match.start() >= 0.6 * len(text) and 8 <= len(words) <= 40 and text.count(sentence) == 1:
                eligible.append(sentence)
    if not eligible:
        return False
    rng = random.Random(case.name)
    sentence = rng.choice(eligible)
    words = _WORD.findall(_LINK_URL.sub("]", sentence))
    content = [w for w in words if w.lower() not in stop and not w.isdigit() or w.isdigit() and len(w) > 1]
    if len(content) < 3:
        return False
    answer = min(reversed(content), key=lambda w: frequency.get(w.lower(), 0))
    others = [w for w in content if w.lower() != answer.lower()]
    case.sentence = sentence
    case.full = " ".join(w for w in words if w.lower() != answer.lower())
    case.sparse = " ".join(rng.sample(others, min(4, len(others))))
    case.pair = " ".join(rng.sample(others, min(2, len(others))))
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--min-characters", type=int, default=12_000)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--show", type=int, default=0, help="print this many misses of each kind")
    args = parser.parse_args()

    from bm25s.stopwords import STOPWORDS_EN

    from webtools.plugins.web_fetch.extract import extract
    from webtools.plugins.web_fetch.focus import focus
    from webtools.plugins.web_fetch.tokens import estimate_tokens
    from webtools.plugins.web_fetch.tool import FetchOptions, Page, WebFetch

    stop = frozenset(STOPWORDS_EN)
    tool = WebFetch(FetchOptions())
    cases = []
    for case in load():
        found = extract(case.html, case.url)
        case.title, case.text, case.language = found.title, found.text.strip(), found.language
        if len(case.text) >= args.min_characters and make_question(case, stop):
            cases.append(case)
    for number, case in enumerate(cases, 1):
        case.kept_out = number % KEPT_OUT == 0

    def first_part(case: Case, query: str) -> dict:
        page = Page(case.url, case.title, case.text, language=case.language)
        return tool.part(page, 0, args.tokens, query)

    results = {}
    over_cap = 0
    misses: dict[str, list] = {"full": [], "4 words": [], "2 words": []}
    for case in cases:
        row = {}
        for kind, query in (("in order", ""), ("full", case.full), ("4 words", case.sparse), ("2 words", case.pair)):
            part = first_part(case, query)
            over_cap += estimate_tokens(part["content"]) > args.tokens
            row[kind] = normal(case.sentence) in normal(part["content"])
            if kind in misses and not row[kind]:
                misses[kind].append((case, query, part))
        results[case.name] = row

    print(f"web_fetch first part of {args.tokens} tokens: does it hold the answer sentence? "
          f"(pages of at least {args.min_characters:,} characters)")
    kinds = ("in order", "full", "4 words", "2 words")
    print(f"{'pages':<10}{'n':>5}" + "".join(f"{kind:>13}" for kind in kinds))
    splits = (("tuned", [c for c in cases if not c.kept_out]), ("kept out", [c for c in cases if c.kept_out]),
              ("all", cases))
    for label, subset in splits:
        n = len(subset)
        hits = [sum(results[c.name][k] for c in subset) for k in kinds]
        print(f"{label:<10}{n:>5}" + "".join(f"{f'{hit}/{n} {100 * hit / n:.0f}%':>13}" for hit in hits))
    print(f"parts over the token cap: {over_cap}")
    for kind, missed in misses.items():
        for case, query, part in missed[:args.show]:
            print(f"\n--- miss ({kind}) {case.name}: {query!r}\n    sentence: {case.sentence!r}\n"
                  f"    ranges: {part.get('ranges')}")

    # Cost: ranking beside extraction, CPU time of this process.
    def timed(work) -> float:
        runs = []
        for _ in range(args.passes):
            start = time.process_time()
            work()
            runs.append(time.process_time() - start)
        return statistics.median(runs)

    extraction = timed(lambda: [extract(c.html, c.url) for c in cases])
    ranking = timed(lambda: [focus(c.text, c.full, tokens=args.tokens, max_characters=20_000, language=c.language)
                             for c in cases])
    n = len(cases)
    characters = sum(len(c.text) for c in cases)
    print(f"\nCPU time over {n} pages ({characters / n:,.0f} characters of text a page on average), "
          f"median of {args.passes} passes:")
    print(f"  extract() {1000 * extraction / n:8.1f} ms a page")
    print(f"  focus()   {1000 * ranking / n:8.1f} ms a page  ({100 * ranking / extraction:.1f}% of extraction)")


if __name__ == "__main__":
    main()
