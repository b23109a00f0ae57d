"""Copies of the page that trafilatura makes, not made within our call (``trafilatura_reading._faster_trafilatura``)
where nothing reads them: our page is handed to it uncopied (``Handed``), and its main extractor's copy of the page
(``extract_content``) is made only when its recovery of stray paragraphs reads it. And its last resort, the whole
page's text, is given in lines (``baseline``)."""
from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from copy import deepcopy

import lxml.html

#: The page we hand trafilatura (``Handed``) during our call, to be pruned on a copy
#: (``trafilatura_reading._prune_unwanted_nodes``).
HANDED: ContextVar = ContextVar("handed_page", default=None)
#: trafilatura's own functions by name, kept when ours first replace them (``trafilatura_reading._patch_trafilatura``).
OWN: dict = {}


class Handed:
    """Our page given to trafilatura 2.3.1's ``bare_extraction`` without the copy it makes of a tree it is given:
    its ``load_html`` (``load_html`` within our call) gives the page itself. trafilatura changes that tree only by
    pruning it (an infinite scroll's next articles, comment sections): ``_prune_unwanted_nodes`` prunes a copy when
    it finds anything to prune (its next steps read the tree it returns), else returns the page as it is; each
    later step copies the tree it changes (its cleaning, baseline, page measure and fallbacks). The copy took 1.2%
    of our CPU time on readability's tuned pages (sampled); their prunes found something on 23 of 104."""

    def __init__(self, doc: lxml.html.HtmlElement):
        self.doc = doc


def load_html(content, *args, **kwargs):
    """trafilatura's ``load_html``, but for our page handed to it (``Handed``): the page itself."""
    if isinstance(content, Handed):
        return content.doc
    return OWN["load_html"](content, *args, **kwargs)


#: The pages prepared for trafilatura's main extractor during our call (``remember_preparation``): each one ->
#: how to prepare it again.
_PREPARED: ContextVar[dict | None] = ContextVar("prepared_pages", default=None)


def remember_preparation(prepared, again: Callable[[], object]) -> None:
    """Remember that ``again()`` prepares a page equal to ``prepared`` (its cleaning and conversion of the same tree,
    unchanged meanwhile), for ``extract_content``; within ``preparing`` only."""
    remembered = _PREPARED.get()
    if remembered is not None:
        remembered[id(prepared)] = (prepared, again)


def preparing():
    """A token for ``done``: within it, ``remember_preparation`` remembers."""
    return _PREPARED.set({})


def done(token) -> None:
    _PREPARED.reset(token)


def extract_content(cleaned_tree, options):
    """trafilatura 2.3.1's ``main_extractor.extract_content``, but for its copy of ``cleaned_tree`` taken before
    its main pass changes it (``backup_tree``), read only when that pass found little (its recovery of stray
    paragraphs, ``recover_wild_text``): here prepared again then when ``remember_preparation`` said how (an equal
    tree, its elements in the same order), else copied as trafilatura does. The copy took 0.6% of our CPU time on
    readability's tuned pages (sampled), and the recovery runs on few pages. The same result (a test holds it to
    trafilatura's own)."""
    from lxml.etree import strip_elements, strip_tags
    from trafilatura.main_extractor import _elem_text, _extract, recover_wild_text
    from trafilatura.settings import MIN_DUPLICATE_LENGTH
    from trafilatura.utils import SPACING_PROTECTED, text_chars_test
    from trafilatura.xml import delete_element

    remembered = _PREPARED.get()
    prepared, again = (remembered or {}).pop(id(cleaned_tree), (None, None))
    backup_tree = deepcopy(cleaned_tree) if prepared is not cleaned_tree else None
    # source order before the main pass moves elements, the backup keeps it
    order = list(cleaned_tree.iter())

    result_body, temp_text, potential_tags = _extract(cleaned_tree, options)

    if len(result_body) == 0 or len(temp_text) < options.min_extracted_size:
        if backup_tree is None:
            backup_tree = again()
        # copies of what the main pass consumed are not recovered again
        consumed = {twin for elem, twin in zip(order, backup_tree.iter(), strict=True) if elem.tag == "done"}
        result_body = recover_wild_text(backup_tree, result_body, options, potential_tags, consumed)
        temp_text = " ".join(result_body.itertext()).strip()
    # drop substantial elements repeating the previous one
    previous = None
    for el in list(result_body):
        current = _elem_text(el)
        if current and current == previous and len(current) > MIN_DUPLICATE_LENGTH:
            delete_element(el, keep_tail=False)
        else:
            previous = current
    # filter output
    strip_elements(result_body, "done")
    strip_tags(result_body, "div")
    for linebreak in result_body.iter("lb"):
        if (
            linebreak.tail
            and not text_chars_test(linebreak.tail)
            and not any(anc.tag in SPACING_PROTECTED for anc in linebreak.iterancestors())
        ):
            linebreak.tail = None
    return result_body, temp_text


def baseline(tree):
    """trafilatura 2.3.1's ``baseline`` (its rescue of a page its extraction read too little of), its one paragraph
    of the page's text runs (its last resort, the whole page's text) in lines: it joins them with line breaks
    in a ``<p>``, where they are spaces, and the model read a shop's or a catalogue's whole page (menus, filters,
    a thousand words and more) as one line."""
    from lxml.etree import SubElement

    body, text, length = OWN["baseline"](tree)
    if len(body) == 1 and body[0].tag == "p" and not len(body[0]) and "\n" in (body[0].text or ""):
        paragraph = body[0]
        first, *lines = paragraph.text.split("\n")
        paragraph.text = first
        for line in lines:
            SubElement(paragraph, "lb").tail = line
    return body, text, length
