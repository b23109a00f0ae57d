"""Benchmark of HTML extraction: webtools' extractor and trafilatura, side by side, in one run.

    .venv/bin/python bench/extract.py [--passes 3] [--sets dragnet,cleaneval-dev] [--every 4] [--worst] [--jobs 2]

Data sets (read in place from ``../shared/corpora``):

- ``readability``: ``readability-pages/*``, 130 pages; gold is the visible text of ``expected.html``,
  the article Mozilla's Readability.js extracts.
- ``dragnet``, ``cleanportaleval``, ``cleaneval-dev``: ``extraction-dev/manifest.json`` (1381, 71 and 58
  pages); gold is the hand-marked main text, CleanEval's ``URL:`` line, ``<p>``/``<h>``/``<l>`` marks
  and annotators' ``<!-- notes -->`` stripped. Three pages have no main text marked (cleanportaleval's
  bbc.co.uk_news_04, "this page contains no article", and _05; cleaneval-dev's 32): no output can score
  on them, so they are left out of F1, empty and words (they scored 0 for every extractor). Nor can any
  output score on a page whose HTML has no text in its body (dragnet's R427 is a server's "ERROR" page
  with an empty body, its gold another page's article): such pages are left out too.

- ``wcxb-forum``, ``wcxb-product``, ``wcxb-collection``, ``wcxb-listing``, ``wcxb-documentation``,
  ``wcxb-service``: ``wcxb-dev/``, the 704 non-article pages of the Web Content eXtraction Benchmark's
  development split (Foley 2026, CC-BY-4.0: keep this attribution wherever its figures are shown), one set
  per page type; gold is the hand-checked ``main_content``, and F1 is the benchmark's own (``evaluate.py``'s
  ``word_f1``: lowercased ``\\w+`` words as a multiset). A last line, ``wcxb (all)``, gives the mean over
  all its pages measured (all, tuned, kept out).

Every fifth page of each set (the 5th, 10th, ... in corpus order; for wcxb, of each page type in the
manifest's order) is *kept out*: nothing in the extractor
is tuned on it, and its figures are printed separately (``kept F1``). For each extractor and set:

- F1: the mean over pages of the F1 of 4-word shingles (tokens are lowercased ``\\w+`` runs; precision
  and recall per page over the multiset of shingles), the measure of the common article-extraction
  benchmarks. Markdown syntax and the URLs of links and images are not counted.
- empty: pages whose output has no word while the gold has text.
- words: the output's words (link and image URLs not counted) over the gold's words, summed over the set.
- pages/s: the median of ``--passes`` timed passes after the scoring pass (which warms imports), in
  CPU time of this process (``time.process_time``: on a machine shared with others, wall time counts
  their work too). The extractors take turns page by page, so whatever slows the machine slows both.
- peak MiB: tracemalloc's peak over one pass (Python's allocations; lxml's trees are C memory, not in it).

Large pages (``--sets large``, part of the default): pages too large for the article extractors, one
table of about 3 MB (``max_html_bytes``, web_fetch's cap) and 5 MB, as issue 9's hostile documents
(``tests.documents.table_page``). For each: seconds to extract (the median of ``--passes``, CPU time),
peak MiB and the output's words.

``trafilatura`` runs with Markdown output, links and tables kept, comments and images dropped and metadata
read: the settings closest to what web_fetch returns. ``trafilatura-plain`` is its default (plain text, no
links, no metadata): its fastest and best-scoring setting. ``--every N`` measures every Nth page only, for
quick runs while iterating (the kept-out rule is unchanged: it is decided on the full set's order).

``--jobs N`` measures the sets in N worker processes at once, a set of more than ``PART_PAGES`` pages
(dragnet) in parts of about that many (every Kth page from the Kth, so each part has the set's mix), each
part in a fresh process; the table is printed in the sets' order as they finish. The figures stay valid:
CPU time is per process, a set's pages/s is the median over passes of its pages over its parts' CPU
seconds summed, and its scores are means over all its pages as in one process. Peak MiB is then the
largest part's. On a machine with fewer free cores than jobs the processes share them, which CPU time
does not count, though caches shared between them may slow both extractors alike.
"""
from __future__ import annotations

import argparse
import gzip
import html as html_lib
import json
import logging
import re
import statistics
import sys
import time
import tracemalloc
import warnings
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import lxml.html

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: ``../shared/corpora`` from the checkout, or from the folder of worktrees it sits in.
CORPORA = next((p / "shared" / "corpora" for p in ROOT.parents if (p / "shared" / "corpora").is_dir()),
               ROOT.parent / "shared" / "corpora")
READABILITY = CORPORA / "readability-pages"
EXTRACTION_DEV = CORPORA / "extraction-dev"
# The URL Readability's own test suite gives its pages.
PAGE_URL = "http://fakehost/test/page.html"
WCXB = CORPORA / "wcxb-dev"
#: wcxb-dev's page types, each measured as a set of its own (``wcxb-forum``, ...).
WCXB_TYPES = ("forum", "product", "collection", "listing", "documentation", "service")
SETS = ("readability", "dragnet", "cleanportaleval", "cleaneval-dev", *(f"wcxb-{t}" for t in WCXB_TYPES), "large")
#: The large pages' sizes in bytes: web_fetch's ``max_html_bytes`` and more.
LARGE_SIZES = (3_000_000, 5_000_000)
#: Every KEPT_OUT-th page of a set is never tuned on.
KEPT_OUT = 5

_MD_LINK_URL = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_TOKEN = re.compile(r"\w+")
_CLEANEVAL_MARK = re.compile(r"^\s*<[phl]>", re.MULTILINE)
#: An annotator's note in a gold file, such as cleanportaleval's "<!-- this page contains no article -->".
_NOTE = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass
class Page:
    set: str
    id: str
    html: bytes
    gold: str
    url: str
    kept_out: bool

    @cached_property
    def scorable(self) -> bool:
        """Whether an output can score: the gold marks main text and the page has text outside its head
        (parsed as web_fetch parses it; lxml alone misreads pages that misdeclare their charset)."""
        from webtools.plugins.web_fetch.extract.page import parse

        if not tokens(self.gold):
            return False
        doc = parse(self.html)
        if doc is None:
            return False
        for head in doc.findall("head"):
            head.drop_tree()
        return bool(tokens(visible_text(doc)))


def visible_text(html: str | lxml.html.HtmlElement) -> str:
    doc = lxml.html.fromstring(html) if isinstance(html, str) else html
    for bad in doc.xpath(".//script|.//style"):
        bad.drop_tree()
    return " ".join(" ".join(doc.itertext()).split())


def markdown_text(markdown: str) -> str:
    """What a reader sees of Markdown, for scoring: link and image URLs dropped."""
    text = _MD_LINK_URL.sub("]", markdown)
    return _AUTOLINK.sub(r"\1", text)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def shingles(words: list[str], n: int = 4) -> Counter:
    if len(words) < n:
        return Counter([tuple(words)]) if words else Counter()
    return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def shingle_f1(produced: str, gold: str) -> float:
    got, want = shingles(tokens(produced)), shingles(tokens(gold))
    if not got and not want:
        return 1.0
    common = sum((got & want).values())
    if not common:
        return 0.0
    precision = common / sum(got.values())
    recall = common / sum(want.values())
    return 2 * precision * recall / (precision + recall)


def cleaneval_text(raw: str) -> str:
    lines = raw.splitlines()
    if lines and lines[0].startswith("URL:"):
        lines = lines[1:]
    return html_lib.unescape(_NOTE.sub("", _CLEANEVAL_MARK.sub("", "\n".join(lines))))


def read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def load_pages(sets: tuple[str, ...]) -> list[Page]:
    pages: list[Page] = []
    if "readability" in sets:
        folders = sorted(p for p in READABILITY.iterdir() if p.is_dir())
        for n, folder in enumerate(folders):
            gold = visible_text((folder / "expected.html").read_text(encoding="utf-8", errors="replace"))
            pages.append(Page("readability", folder.name, (folder / "source.html").read_bytes(), gold, PAGE_URL,
                              n % KEPT_OUT == KEPT_OUT - 1))
    manifest = json.loads((EXTRACTION_DEV / "manifest.json").read_text())
    seen: Counter = Counter()
    for entry in manifest:
        name = entry["dataset"]
        if name not in sets:
            continue
        n = seen[name]
        seen[name] += 1
        raw = read_text(EXTRACTION_DEV / entry["gold"])
        url = ""
        if name != "dragnet":
            # cleanportaleval's golds open with a blank line before their "URL:" line.
            raw = raw.lstrip()
            first = raw.split("\n", 1)[0]
            url = first[4:].strip() if first.startswith("URL:") else ""
            raw = cleaneval_text(raw)
        html = gzip.decompress((EXTRACTION_DEV / entry["html"]).read_bytes())
        pages.append(Page(name, entry["id"], html, raw, url or f"http://{name}.test/{entry['id']}.html",
                          n % KEPT_OUT == KEPT_OUT - 1))
    return pages


def load_wcxb(sets: tuple[str, ...]) -> list[Page]:
    """wcxb-dev's pages of the types asked for; every fifth page of each type (in the manifest's order) is
    kept out."""
    wanted = {name.removeprefix("wcxb-") for name in sets if name.startswith("wcxb-")}
    if not wanted:
        return []
    pages, seen = [], Counter()
    for entry in json.loads((WCXB / "manifest.json").read_text()):
        kind = entry["page_type"]
        n = seen[kind]
        seen[kind] += 1
        if kind not in wanted:
            continue
        truth = json.loads((WCXB / "ground-truth" / f"{entry['id']}.json").read_text()).get("ground_truth") or {}
        html = gzip.decompress((WCXB / "html" / f"{entry['id']}.html.gz").read_bytes())
        pages.append(Page(f"wcxb-{kind}", entry["id"], html, truth.get("main_content") or "", entry["url"],
                          n % KEPT_OUT == KEPT_OUT - 1))
    return pages


def wcxb_f1(produced: str, gold: str) -> float:
    """The benchmark's own score of a page: ``evaluate.py``'s ``word_f1`` (lowercased ``\\w+`` words as
    a multiset), imported from the corpus."""
    import importlib.util

    global _wcxb_evaluate
    if _wcxb_evaluate is None:
        spec = importlib.util.spec_from_file_location("wcxb_evaluate", WCXB / "evaluate.py")
        _wcxb_evaluate = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_wcxb_evaluate)
    return _wcxb_evaluate.word_f1(produced, gold)[2]


_wcxb_evaluate = None


def ours(page: Page) -> str:
    from webtools.plugins.web_fetch.extract import extract

    return extract(page.html, page.url)[1]


def trafilatura_extract(page: Page) -> str:
    import trafilatura

    out = trafilatura.extract(
        page.html, url=page.url, output_format="markdown", include_links=True, include_images=False,
        include_tables=True, include_comments=False, with_metadata=True,
    ) or ""
    if out.startswith("---\n"):
        out = out[4:].partition("\n---\n")[2]
    return out.strip()


def trafilatura_plain(page: Page) -> str:
    """trafilatura's default: plain text, no links, no metadata (its fastest and best-scoring setting)."""
    import trafilatura

    return trafilatura.extract(page.html, url=page.url) or ""


EXTRACTORS = {"webtools": ours, "trafilatura": trafilatura_extract, "trafilatura-plain": trafilatura_plain}


def timed_passes(funcs: dict, pages: list[Page], passes: int) -> dict[str, list[float]]:
    """Each extractor's CPU seconds over ``pages``, one figure per pass, the extractors taking turns
    page by page."""
    seconds: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(passes):
        spent = dict.fromkeys(funcs, 0.0)
        for page in pages:
            for name, func in funcs.items():
                start = time.process_time()
                func(page)
                spent[name] += time.process_time() - start
        for name in funcs:
            seconds[name].append(spent[name])
    return seconds


def peak_mib(func, pages: list[Page]) -> float:
    tracemalloc.start()
    for page in pages:
        func(page)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def measure_part(funcs: dict, pages: list[Page], passes: int) -> dict[str, dict]:
    """One extractor's raw figures over ``pages`` (a set, or a part of one): per-page scores, words,
    CPU seconds per timed pass and peak MiB. ``summarize`` turns the parts of a set into its row."""
    raw = {}
    for name, func in funcs.items():
        per_page, empty, out_words, gold_words = {}, 0, 0, 0
        for page in pages:
            text = markdown_text(func(page))
            if not page.scorable:
                continue  # no main text marked, or no text in the page: no output can score
            score = wcxb_f1(text, page.gold) if page.set.startswith("wcxb-") else shingle_f1(text, page.gold)
            words, want = len(tokens(text)), len(tokens(page.gold))
            empty += words == 0 and want > 0
            out_words += words
            gold_words += want
            per_page[page.id] = (score, page.kept_out)
        raw[name] = {"pages": per_page, "empty": empty, "out_words": out_words, "gold_words": gold_words,
                     "count": len(pages)}
    for name, seconds in timed_passes(funcs, pages, passes).items():
        raw[name]["seconds"] = seconds
    for name, func in funcs.items():
        raw[name]["peak"] = peak_mib(func, pages)
    return raw


def summarize(parts: list[dict]) -> dict[str, dict]:
    """A set's row per extractor from the raw figures of its parts (``measure_part``): scores are means
    over all its pages; pages/s is the median over passes of all pages over the parts' CPU seconds summed
    (each part measured in its own process: CPU time is per process); peak MiB the largest part's."""
    results = {}
    for name in parts[0]:
        per_page = {page: entry for part in parts for page, entry in part[name]["pages"].items()}
        scores = [score for score, _ in per_page.values()]
        tuned = [score for score, kept in per_page.values() if not kept]
        kept = [score for score, kept in per_page.values() if kept]
        count = sum(part[name]["count"] for part in parts)
        passes = zip(*(part[name]["seconds"] for part in parts))
        rates = [count / sum(seconds) for seconds in passes if sum(seconds) > 0]
        results[name] = {
            "f1": statistics.mean(scores) if scores else float("nan"),
            "tuned": statistics.mean(tuned) if tuned else float("nan"),
            "kept": statistics.mean(kept) if kept else float("nan"),
            "empty": sum(part[name]["empty"] for part in parts),
            "ratio": sum(part[name]["out_words"] for part in parts) / max(
                sum(part[name]["gold_words"] for part in parts), 1),
            "rate": statistics.median(rates) if rates else float("nan"),
            "peak": max(part[name]["peak"] for part in parts),
            "count": count,
            "pages": {page: score for page, (score, _) in per_page.items()},
        }
    return results


def measure(funcs: dict, pages: list[Page], passes: int) -> dict[str, dict]:
    return summarize([measure_part(funcs, pages, passes)])


def _quiet() -> None:
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)


def selected(pages: list[Page], name: str, part: str, every: int) -> list[Page]:
    """The pages of set ``name`` that a run measures: of the ``part`` asked for ("all", "tuned" or
    "kept"), every ``every``-th."""
    return [p for p in pages if p.set == name and part in ("all", ("tuned", "kept")[p.kept_out])][::every]


def _measure_job(job: tuple[str, int, int, list[str], str, int, int]) -> tuple[str, dict]:
    """A worker process's part of a set: every ``parts``-th of the set's pages measured, from ``start``."""
    name, start, parts, names, part_of_set, every, passes = job
    _quiet()
    pages = selected(load_pages((name,)) + load_wcxb((name,)), name, part_of_set, every)[start::parts]
    funcs = {extractor: EXTRACTORS[extractor] for extractor in names}
    return name, measure_part(funcs, pages, passes)


def large_pages() -> list[Page]:
    from tests.documents import table_page

    return [Page("large", f"table {size / 1e6:g} MB", table_page(size).encode(), "", "http://large.test/table.html",
                 False) for size in LARGE_SIZES]


def measure_large(funcs: dict, passes: int) -> None:
    print(f"\n{'large page':<16} {'bytes':>9} {'extractor':<17} {'seconds':>8} {'peak MiB':>9} {'words':>8}")
    for page in large_pages():
        words = {name: len(tokens(markdown_text(func(page)))) for name, func in funcs.items()}
        seconds = timed_passes(funcs, [page], passes)
        for name, func in funcs.items():
            median = statistics.median(seconds[name]) if seconds[name] else float("nan")
            print(f"{page.id:<16} {len(page.html):>9} {name:<17} {median:8.2f} {peak_mib(func, [page]):9.1f} "
                  f"{words[name]:>8}", flush=True)


def _wcxb_means(dump: dict, names: list[str], extractor: str, pages: list[Page]) -> list[list[float]]:
    """All, tuned and kept-out scores of one extractor over the wcxb sets."""
    kept = {(p.set, p.id): p.kept_out for p in pages}
    scores = [(kept[(name, page)], score) for name in names for page, score in dump[name][extractor].items()]
    return [[s for _, s in scores], [s for k, s in scores if not k] or [float("nan")],
            [s for k, s in scores if k] or [float("nan")]]


#: With ``--jobs``, a set of more pages than this is measured in parts of about this many, each in a
#: process of its own (dragnet's 1381 pages in ten), so that the jobs share the work evenly.
PART_PAGES = 150


def _measure_in_jobs(sets: list[str], names: list[str], args, sizes: dict[str, int]):
    """Each set's rows, in the order of ``sets``, measured in up to ``args.jobs`` worker processes (a
    fresh one for each part: CPU time is per process, so each part's figures are its own)."""
    import multiprocessing

    jobs = []
    for name in sets:
        parts = max(1, -(-sizes.get(name, 0) // PART_PAGES))
        jobs.extend((name, start, parts, names, args.part, args.every, args.passes) for start in range(parts))
    with multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=1) as pool:
        pending = {name: [] for name in sets}
        expected = {name: sum(1 for job in jobs if job[0] == name) for name in sets}
        results = pool.imap_unordered(_measure_job, jobs)
        for name in sets:
            while len(pending[name]) < expected[name]:
                done, raw = next(results)
                pending[done].append(raw)
            yield name, summarize(pending.pop(name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated: " + ", ".join(SETS))
    parser.add_argument("--every", type=int, default=1, help="measure every Nth page only (quick runs)")
    parser.add_argument("--part", choices=("all", "tuned", "kept"), default="all",
                        help="measure the tuned pages only, the kept-out ones only, or all")
    parser.add_argument("--extractors", default="webtools,trafilatura,trafilatura-plain")
    parser.add_argument("--worst", action="store_true", help="list the pages where webtools trails most")
    parser.add_argument("--scores", help="write per-page scores to this JSON file")
    parser.add_argument("--jobs", type=int, default=1,
                        help="measure the sets (large ones in parts) in this many processes at once")
    args = parser.parse_args()
    if not EXTRACTION_DEV.is_dir() or not READABILITY.is_dir():
        sys.exit(f"Corpora not found under {CORPORA}")
    _quiet()
    sets = tuple(s for s in args.sets.split(",") if s)
    all_pages = load_pages(sets) + load_wcxb(sets)
    names = [n for n in args.extractors.split(",") if n]
    print(f"{'set':<16} {'pages':>5} {'extractor':<17} {'F1':>6} {'tuned':>6} {'kept':>6} {'empty':>5} "
          f"{'words':>6} {'pages/s':>8} {'peak MiB':>9}")
    dump = {}
    funcs = {extractor: EXTRACTORS[extractor] for extractor in names}
    measured = {name: selected(all_pages, name, args.part, args.every) for name in sets if name != "large"}
    if args.jobs > 1:
        rows = _measure_in_jobs(list(measured), names, args, {name: len(pages) for name, pages in measured.items()})
    else:
        rows = ((name, measure(funcs, pages, args.passes)) for name, pages in measured.items())
    for name, results in rows:
        for extractor, r in results.items():
            print(f"{name:<16} {r['count']:>5} {extractor:<17} {r['f1']:6.3f} "
                  f"{r['tuned']:6.3f} {r['kept']:6.3f} {r['empty']:>5} {r['ratio']:6.3f} {r['rate']:8.1f} "
                  f"{r['peak']:9.1f}", flush=True)
        dump[name] = {extractor: r["pages"] for extractor, r in results.items()}
        if args.worst and len(results) > 1:
            ours_, peer = results[names[0]]["pages"], results[names[1]]["pages"]
            gaps = sorted((ours_[p] - peer[p], p) for p in ours_)[:10]
            print("   trails most:", ", ".join(f"{p} {gap:+.2f}" for gap, p in gaps))
    wcxb = [name for name in sets if name.startswith("wcxb-")]
    if len(wcxb) > 1:
        # The mixed-type pages as one set: the mean of every page's score, tuned and kept-out apart.
        for extractor in names:
            means = [statistics.mean(v) for v in _wcxb_means(dump, wcxb, extractor, all_pages)]
            print(f"{'wcxb (all)':<16} {'':>5} {extractor:<17} {means[0]:6.3f} {means[1]:6.3f} {means[2]:6.3f}")
    if "large" in sets:
        measure_large(funcs, args.passes)
    if args.scores:
        Path(args.scores).write_text(json.dumps(dump))


if __name__ == "__main__":
    main()
