"""readability-lxml's candidate for the main content, run on the tree we already parsed and cleaned, with
its costliest steps done cheaper (``_Readability``).

Each candidate is HTML (an lxml element) for the Markdown writer. The two extractors fail differently:
readability scores text blocks and keeps the best one with its siblings, so it keeps an article's
structure but sometimes takes a whole column of links or misses a short post; trafilatura
(``trafilatura_reading``) walks the page with rules about tags and link density, and is precise but often
drops a section of the article (a list, a table, a paragraph in an odd container). ``choice`` merges them.
"""
from __future__ import annotations

import copy
import logging
import re

import lxml.html
from lxml import etree

from webtools._vendor import readability
from webtools._vendor.readability import Document

from webtools.net import displayed_urls

from .page import absolutize

logger = logging.getLogger("webtools.web_fetch")


_WHITESPACE_RUN = re.compile(r"\s{2,}|[^\S ]")
_SPACES_AND_TABS = re.compile(r"\t|[ \t]{2,}")


def _clean_run(match: re.Match) -> str:
    run = match.group()
    if len(run) >= 255:
        return " "
    if "\n" in run:
        return "\n"
    return _SPACES_AND_TABS.sub(" ", run)


#: A run of 255 whitespace characters or more (written to start with one, so that re skips to them).
_LONG_RUN = re.compile(r"\s\s{254}")
#: readability's ``\t|[ \t]{2,}``, written to start with a space or a tab: a tab alone, else a run.
_TAB_OR_SPACES = re.compile(r"[ \t](?:(?<=\t)|[ \t]+)")


def readability_clean(text: str) -> str:
    """readability-lxml's ``clean()`` (whitespace runs: 255 or more become a space, with a line break a
    line break, spaces and tabs a space), without its three regular expressions tried at every character.

    readability calls it on the text of every paragraph and of the elements around it: those were a tenth
    of all extraction time. Without a run of 255, a run with a line break is where lines meet: the lines,
    trimmed, joined by one. The result is the same for every text (a differential test holds it to
    readability's own)."""
    if len(text) >= 255 and _LONG_RUN.search(text):
        return _WHITESPACE_RUN.sub(_clean_run, text).strip()
    if "\n" in text:
        text = "\n".join(filter(None, [line.strip() for line in text.split("\n")]))
    else:
        text = text.strip()
    return _TAB_OR_SPACES.sub(" ", text) if "  " in text or "\t" in text else text


#: readability's own, kept for the differential test.
readability_original_clean = readability.readability.clean
readability.readability.clean = readability_clean


def _only_when_logged(describe):
    """One of readability's descriptions of a node for its debug log, made only when that log is on.

    readability formats each debug message before the logger drops it, describing every paragraph it
    scores and every element it sanitizes; and its ``describe()`` keeps each node it described (so the
    last page's tree) alive until it describes another page's."""
    def described(*args, **kwargs):
        return describe(*args, **kwargs) if readability.readability.log.isEnabledFor(logging.DEBUG) else ""
    return described


readability.readability.describe = _only_when_logged(readability.readability.describe)
readability.readability.text_content = _only_when_logged(readability.readability.text_content)


class _Caseless:
    """One of readability's case-insensitive patterns (written in lower case), tried on the lower-cased
    string when that is ASCII, else as it is.

    readability tests each class and id against these (which look unlikely, which score up or down),
    and Python's ``re`` compares every character of a case-insensitive pattern case-insensitively: eight
    times slower than lower-casing the string and searching it case-sensitively. The two find the same
    in an ASCII string (only other characters have case rules beyond lower-casing: ``K``, ``ſ``, ``ı``,
    which the pattern as it is matches); a test holds them to each other. readability only asks whether
    one is found."""

    def __init__(self, pattern: re.Pattern):
        assert pattern.flags & re.IGNORECASE and pattern.pattern == pattern.pattern.lower()
        self.original = pattern
        self.pattern = pattern.pattern
        self.flags = pattern.flags
        self._cased = re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)

    def search(self, string: str) -> re.Match | None:
        if string.isascii():
            return self._cased.search(string.lower())
        return self.original.search(string)


#: Searched on classes and ids (divToPElementsRe searches markup, callToActionRe a paragraph's start).
CASELESS_PATTERNS = ("unlikelyCandidatesRe", "okMaybeItsACandidateRe", "positiveRe", "negativeRe", "editorialLeadRe")
for _name in CASELESS_PATTERNS:
    if not isinstance(readability.readability.REGEXES[_name], _Caseless):
        readability.readability.REGEXES[_name] = _Caseless(readability.readability.REGEXES[_name])


class _Readability(Document):
    """readability-lxml on a tree we already parsed and cleaned, copied for each of its passes (it
    mutates the tree it works on and retries on the result otherwise)."""

    def _parse(self, input):
        return copy.deepcopy(input)

    def remove_unlikely_candidates(self):
        """readability-lxml 0.9's own, with its two XPath expressions compiled once instead of for each
        element whose class or id looks unlikely, its two regular expressions tried once for each
        class and id (a page's elements share a few), and only the elements with a class or an id read
        (readability skips the others, and each element it reads from lxml costs a Python object)."""
        unlikely, maybe = _REGEXES["unlikelyCandidatesRe"], _REGEXES["okMaybeItsACandidateRe"]
        verdicts: dict[str, bool] = {}
        for elem in _WITH_CLASS_OR_ID(self.html):
            s = "{} {}".format(elem.get("class", ""), elem.get("id", ""))
            if len(s) < 2:
                continue
            looks_unlikely = verdicts.get(s)
            if looks_unlikely is None:
                looks_unlikely = verdicts[s] = bool(unlikely.search(s)) and not maybe.search(s)
            if (
                looks_unlikely
                and elem.tag not in ["html", "body"]
                and not _IN_CODE(elem)
                and not _HOLDS_ARTICLE(elem)
            ):
                readability.readability.log.debug(
                    "Removing unlikely candidate - %s", readability.readability.describe(elem))
                elem.drop_tree()

    def tags(self, node, *tag_names):
        """readability's own: each tag's descendants of ``node`` in document order, each tag's found when
        its turn comes. readability asks ``findall(".//tag")``, which lxml's ElementPath answers with
        ``iterdescendants(tag)`` through two generators of its own."""
        for tag_name in tag_names:
            yield from list(node.iterdescendants(tag_name))

    def reverse_tags(self, node, *tag_names):
        """readability's own (``tags`` read backwards), without ElementPath."""
        for tag_name in tag_names:
            yield from reversed(list(node.iterdescendants(tag_name)))

    def transform_misused_divs_into_paragraphs(self):
        """readability's own, but for its tests of markup: whether a ``<div>`` holds block elements (else
        it becomes a ``<p>``), and whether each inline child of a div does (else it joins a paragraph).
        readability serialises the div's children (or the child) and searches the markup, so nested
        divs serialised the page again and again (6% of extraction time); the tags say the same. The
        rest is readability-lxml 0.9's (a test holds the whole to its own)."""
        for elem in self.tags(self.html, "div"):
            if not _holds_block(elem):
                elem.tag = "p"
        for elem in self.tags(self.html, "div"):
            children = list(elem)
            paragraph = None
            if elem.text and elem.text.strip():
                p = elem.makeelement("p")
                p.text = elem.text
                elem.text = None
                elem.insert(0, p)
                paragraph = p
            for child in children:
                if child.tag == "br":
                    paragraph = None
                    continue
                # readability searches the child's markup for a block's tag: its descendants' tags say
                # the same (its own is inline, its text and tail are escaped).
                if child.tag not in _INLINE_TAGS or _holds_block(child):
                    paragraph = None
                    continue
                if paragraph is None:
                    paragraph = elem.makeelement("p")
                    child.addprevious(paragraph)
                paragraph.append(child)
            for pos, child in reversed(list(enumerate(elem))):
                if child.tail and child.tail.strip():
                    p = elem.makeelement("p")
                    p.text = child.tail
                    child.tail = None
                    elem.insert(pos + 1, p)
                if child.tag == "br":
                    child.drop_tree()

    #: While readability looks for the blocks it keeps whatever their score (it changes nothing then),
    #: whether each element leads a quote, read once: it asks for each ``<div>`` and each of its ancestors.
    _quote_leads: dict | None = None

    def get_preserved_elements(self, node):
        self._quote_leads = {}
        try:
            return super().get_preserved_elements(node)
        finally:
            self._quote_leads = None

    def is_quote_lead(self, elem):
        """readability-lxml 0.9's own: whether ``elem`` or an ancestor is followed by a block holding a
        ``<blockquote>`` and its text (cleaned) is long and ends with a colon. Each element is judged once,
        and its text cleaned only when it ends with a colon (cleaning keeps the last visible character)."""
        leads = self._quote_leads
        for lead in (elem,) + tuple(elem.iterancestors()):
            if leads is not None and lead in leads:
                if leads[lead]:
                    return True
                continue
            following = lead.getnext()
            found = False
            if following is not None and following.findall(".//blockquote"):
                text = lead.text_content() or ""
                found = text.rstrip().endswith(":") and len(readability_clean(text)) >= self.min_text_length
            if leads is not None:
                leads[lead] = found
            if found:
                return True
        return False

    #: While readability scores paragraphs (it changes nothing then), each link's text length, read once:
    #: the same links are measured again for each enclosing candidate, a paragraph's parent and its
    #: grandparent.
    _link_lengths: dict | None = None

    def score_paragraphs(self):
        self._link_lengths = {}
        try:
            return super().score_paragraphs()
        finally:
            self._link_lengths = None

    def get_link_density(self, elem):
        # readability measures text with two regular expressions per call, once per link and once for
        # the element: a third of all extraction time. Collapsing whitespace with split() gives the same
        # lengths (up to rare non-breaking-space runs) at a fraction of the cost.
        lengths = self._link_lengths
        if lengths is None:
            links = sum(_collapsed_length(a.text_content()) for a in elem.iterdescendants("a"))
        else:
            links = 0
            for a in elem.iterdescendants("a"):
                if a not in lengths:
                    lengths[a] = _collapsed_length(a.text_content())
                links += lengths[a]
        if not links:  # no link text: no density, whatever the element's text (which is not read)
            return 0.0
        return links / max(_collapsed_length(elem.text_content()), 1)

    def select_best_candidate(self, candidates):
        """readability-lxml 0.9's own, but for how it tells whether an ``<article>`` candidate lies within
        the best one: it gathered all the best one's descendants in a set (often the whole page's
        elements), for the articles among the candidates, which most pages do not have; here the
        article's ancestors are searched for it."""
        if not candidates:
            return None
        sorted_candidates = sorted(candidates.values(), key=lambda x: x["content_score"], reverse=True)
        best_candidate = sorted_candidates[0]
        article_body_candidates = [
            candidate for candidate in sorted_candidates
            if "articleBody" in (candidate["elem"].get("itemprop") or "").split()
            and self.get_link_density(candidate["elem"]) <= 0.1
        ]
        if article_body_candidates:
            best_candidate = article_body_candidates[0]
        best_elem = best_candidate["elem"]
        nested_articles = [
            candidate for candidate in sorted_candidates
            if candidate["elem"].tag == "article"
            and best_elem in candidate["elem"].iterancestors()
            and readability.readability.text_length(candidate["elem"]) >= 250
            and candidate["content_score"] >= best_candidate["content_score"] * 0.25
        ]
        if nested_articles:
            best_candidate = nested_articles[0]
        return best_candidate

    def sanitize(self, node, candidates, keep_all_images=False):
        """readability-lxml 0.9's own, but for how its last step (which tables, lists and blocks of the
        article go) reads each block: readability read the block's text three times (for its commas,
        its length and its link density), searched it seven times for the tags it counts and measured
        again each link's text for each block around it, and the blocks are nested. Here the text is
        read once, the tags counted in one walk, and a link's length is measured once and again only
        after a block within it went. A test holds the article to readability's own."""
        if keep_all_images:
            return super().sanitize(node, candidates, keep_all_images)
        for header in self.tags(node, "h1", "h2", "h3", "h4", "h5", "h6"):
            if self.class_weight(header) < 0 or self.get_link_density(header) > 0.33:
                header.drop_tree()
        for elem in self.tags(node, "p"):
            # Both asked, the link density first: a paragraph without links has none, read without its text.
            if self.get_link_density(elem) > 0.2 and _REGEXES["callToActionRe"].search(elem.text_content()):
                elem.drop_tree()
        for elem in self.tags(node, "form", "textarea"):
            elem.drop_tree()
        for elem in self.tags(node, "iframe"):
            if "src" in elem.attrib and readability.readability.is_video_url(elem.attrib["src"]):
                elem.attrib.pop("srcdoc", None)
                elem.text = "VIDEO"
            else:
                elem.drop_tree()
        allowed = self.get_preserved_elements(node)
        link_lengths: dict = {}
        for el in self.reverse_tags(node, "table", "ul", "div", "aside", "header", "footer", "section"):
            if el not in allowed and self._goes(el, candidates, allowed, link_lengths):
                # The links around it lose its text.
                for link in el.iterancestors("a"):
                    link_lengths.pop(link, None)
                el.drop_tree()
        self.html = node
        return self.get_clean_html()

    def _goes(self, el, candidates, allowed, link_lengths) -> bool:
        """Whether readability's ``sanitize`` removes ``el`` (it marks some blocks within it ``allowed``)."""
        weight = self.class_weight(el)
        content_score = candidates[el]["content_score"] if el in candidates else 0
        if weight + content_score < 0:
            return True
        text = el.text_content()
        if text.count(",") >= 10:
            return False
        counts = dict.fromkeys(_COUNTED_TAGS, 0)
        links = 0
        for found in el.iterdescendants(*_COUNTED_TAGS):
            tag = found.tag
            counts[tag] += 1
            if tag == "a":
                length = link_lengths.get(found)
                if length is None:
                    length = link_lengths[found] = _collapsed_length(found.text_content())
                links += length
            elif tag == "input" and found.get("type") == "hidden":
                counts["input"] -= 1
        counts["li"] -= 100
        # readability asks of the cleaned text's length only whether it is below ``min_text_length``, below
        # 75 and zero; cleaning only removes and replaces whitespace, so the text's visible characters
        # (counted for the link density, which only a block with links needs) are a floor that often
        # answers all three without cleaning the block's text.
        link_density = 0.0
        content_length = None
        if links:
            words = text.split()
            visible = sum(map(len, words))
            link_density = links / max(visible + max(len(words) - 1, 0), 1)
            if visible >= max(75, self.min_text_length):
                content_length = visible
        if content_length is None:
            content_length = len(readability_clean(text))
        tag = el.tag
        if counts["p"] and counts["img"] > 1 + counts["p"] * 1.3:
            return True
        if counts["li"] > counts["p"] and tag not in ("ol", "ul"):
            return True
        if counts["input"] > (counts["p"] / 3):
            return True
        if content_length < self.min_text_length and counts["img"] == 0:
            return True
        if content_length < self.min_text_length and counts["img"] > 2:
            return True
        if weight < 25 and link_density > (
                0.25 if tag in ("ul", "section") and _IN_MAIN_OR_ARTICLE(el) else 0.2):
            return True
        if weight >= 25 and link_density > 0.5:
            return True
        if (counts["embed"] == 1 and content_length < 75) or counts["embed"] > 1:
            return True
        if content_length:
            return False
        # No text: kept when the nearest sibling with text on either side make more than 1000 characters.
        siblings = []
        for sib in el.itersiblings():
            sib_content_length = readability.readability.text_length(sib)
            if sib_content_length:
                siblings.append(sib_content_length)
                break
        for sib in el.itersiblings(preceding=True):
            sib_content_length = readability.readability.text_length(sib)
            if sib_content_length:
                siblings.append(sib_content_length)
                break
        if siblings and sum(siblings) > 1000:
            for desnode in self.tags(el, "table", "ul", "div", "section"):
                allowed[desnode] = True
            return False
        return True


_COUNTED_TAGS = ("p", "img", "li", "a", "embed", "input")
_IN_MAIN_OR_ARTICLE = etree.XPath("ancestor::main | ancestor::article")
_REGEXES = readability.readability.REGEXES
_WITH_CLASS_OR_ID = etree.XPath("descendant::*[@class or @id]")
_IN_CODE = etree.XPath("ancestor-or-self::pre | ancestor-or-self::code")
_HOLDS_ARTICLE = etree.XPath("descendant-or-self::main | descendant-or-self::article | descendant-or-self::math")
#: readability's ``divToPElementsRe``: the start of a block element's tag in markup (a prefix: ``<p`` also
#: finds ``<pre>`` and ``<picture>``), and the inline tags it gathers into paragraphs.
_BLOCK_MARKUP = readability.readability.REGEXES["divToPElementsRe"]
_BLOCK_TAG = re.compile(_BLOCK_MARKUP.pattern.removeprefix("<"), re.IGNORECASE)
_INLINE_TAGS = frozenset({"a", "b", "cite", "code", "em", "font", "i", "small", "span", "strong", "sub", "sup", "u"})


def _holds_block(elem: lxml.html.HtmlElement) -> bool:
    """Whether ``_BLOCK_MARKUP`` finds a tag in the markup of ``elem``'s children: one of their tags or
    their descendants' starts with a block element's name (text and attributes are escaped there)."""
    for descendant in elem.iterdescendants():
        tag = descendant.tag
        if not isinstance(tag, str):
            continue  # comments and processing instructions: "<!--", "<?"
        if not tag.isascii() or tag.startswith("{"):  # written otherwise in markup: ask readability's way
            return bool(_BLOCK_MARKUP.search(str(b"".join(etree.tostring(s, encoding="utf-8") for s in elem))))
        if _BLOCK_TAG.match(tag):
            return True
    return False


def _collapsed_length(text: str) -> int:
    """The length of ``text`` with its whitespace runs collapsed to a space and its ends stripped."""
    return len(" ".join(text.split()))


def readability_article(doc: lxml.html.HtmlElement, url: str, base: str) -> lxml.html.HtmlElement | None:
    """readability-lxml's article (``summary(html_partial=True)``: the full-document form has returned an
    empty body where the partial one found the article), links absolute; None when it finds nothing."""
    try:
        article_html = _Readability(doc, url=url).summary(html_partial=True)
    except Exception:  # readability raises Unparseable (and worse) on odd trees
        logger.debug("readability failed on %s", displayed_urls(str(url)), exc_info=True)
        return None
    if not article_html:
        return None
    content = lxml.html.fragment_fromstring(article_html, create_parent="div")
    absolutize(content, base)
    return content
