"""A thread's posts: every post of a forum or Q&A page, each with its author and date.

The article extractors keep the best-scored block of a page, which on a thread is its first post (or its
longest): the replies were lost. A thread's posts are found by what marks them:

1. schema.org microdata, which most forum software writes (Discourse, XenForo, Stack Exchange,
   vBulletin 5, Invision): a post's text is ``itemprop="text"`` (or ``articleBody``) inside an item of
   type ``Question``, ``Answer``, ``Comment``, ``DiscussionForumPosting`` or ``SocialMediaPosting``;
2. else the class or id names of the post bodies of common forum software (phpBB's ``postbody``,
   vBulletin's ``post_message_N``, XenForo's ``bbWrapper``, Discourse's ``cooked``, ...), the innermost where they
   nest (FluxBB's ``postmsg`` within its ``postbody``, which shows the author's profile too).

A post's *container* is the largest element around its body that holds no other post; its author and date
are read there, outside the body (microdata ``author``/``datePublished``, ``<time datetime>``, class names
such as ``username`` or ``post-date``), else the short text before the body is the post's byline as the page
shows it (see ``MAX_HEADING_WORDS``).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from lxml import etree

from .metadata import iso_date
from .page import REMOVED_TAGS, text_length

#: Compiled once, with ``/descendant::`` for ``//`` (see ``metadata.JSON_LD_SCRIPTS``).
_NAMED = etree.XPath("/descendant::body/descendant::*[@class or @id or @data-role]")
_PROPS = etree.XPath("/descendant::body/descendant::*[@itemprop]")
#: Item types whose ``text`` is a post.
_POST_ITEM = re.compile(
    r"schema\.org/(?:Question|Answer|Comment|DiscussionForumPosting|SocialMediaPosting)/?$", re.IGNORECASE)
#: Item types of a question and its answers: a ``Comment`` within one is a remark on that post.
_QA_ITEM = re.compile(r"schema\.org/(?:Question|Answer)/?$", re.IGNORECASE)
_ANSWER_ITEM = re.compile(r"schema\.org/Answer/?$", re.IGNORECASE)
_BODY_PROPS = frozenset({"text", "articleBody"})
#: Class names of post bodies in common forum software. Old Reddit's ``usertext-body`` (each comment's text, in
#: a form for its editing, which cleaning removes: its thread was read as its menus and bylines without a
#: comment); the box of its community's rules beside the thread is written alike, and left out
#: (``_without_strays``). Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): forums 0.8447
#: to 0.8507 (its one Old Reddit page, 0.28 to 0.79), the other types and the article sets unchanged page by page.
#: Hacker News's ``commtext`` (a comment) and ``toptext`` (an Ask HN's question), by ``hnuser`` (``_AUTHOR_CLASS``):
#: its threads were read as articles, the comments' text without their authors; no page of the bench sets has
#: one (each page's output unchanged).
_BODY_CLASS = re.compile(
    r"(?:^|\s)(?:bbWrapper|cooked|postbody|post_body|post-body|postcontent|post-content|post_content|"
    r"post-message|postmsg|messageText|message-body|message-content|js-post-body|post-text|posttext|"
    r"reply-content|topic-content|usertext-body|commtext|toptext)(?:\s|$)", re.IGNORECASE)
_BODY_ID = re.compile(r"^(?:post_message_|post-content-|postmessage_|message-)\d+$", re.IGNORECASE)
_AUTHOR_CLASS = re.compile(
    r"(?:^|[\s_-])(?:username|user-name|user_name|author|poster|postauthor|post-author|bigusername|"
    r"creator|user-info|userinfo|memberName|hnuser)(?:$|[\s_-])", re.IGNORECASE)
_DATE_CLASS = re.compile(r"(?:^|[\s_-])(?:date|time|timestamp|postdate|post-date|published)(?:$|[\s_-])",
                         re.IGNORECASE)
#: A name is short; longer "author" text is a profile box.
MAX_AUTHOR_WORDS = 5
MAX_DATE_WORDS = 8
#: A post's date is given as the page shows it ("May 3, 2024, 8:45am") when that names its year, else in
#: ISO 8601 from its markup: a relative or partial date ("2y", "10 hours ago", "Jan 5") would lose the day
#: once the page is read later. Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0):
#: forums 0.787 to 0.804 (36 pages up, none down; its readers copied the dates as shown, and an ISO
#: date-time's digits are seven words of which one is theirs). Given whenever shown with a digit, 0.001
#: more, but "Jan 5" lost its year.
_DATE_PROPS = frozenset({"datePublished", "dateCreated"})
_FULL_DATE = re.compile(r"\b(?:19|20)\d\d\b")
#: A reply's title is the thread's after "Re:" (phpBB, SMF and mail archives head each post with it): a
#: post's heading that repeats the thread's title is left out, as is a control inside a post (an element
#: of ``role="button"``, as a ``<button>`` is: XenForo's "Click to expand..." under a quote). Measured on the
#: tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0), whose readers left both out: forums 0.804 to
#: 0.806 (3 phpBB pages up by the titles, 10 XenForo pages by the controls, none down).
_REPLY = re.compile(r"^(?:re\s*:\s*)+", re.IGNORECASE)
#: A poster's signature, under each of their posts: not a post (see ``_in_signature``).
_SIGNATURE = re.compile(r"signature", re.IGNORECASE)
#: A reply's quote of an earlier post of the thread, this many words or more, is left out: the post it
#: repeats is there. A shorter quote is the part of it the reply answers, and is kept. Measured on the tuned
#: part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): forums 0.814 to 0.832, 19 pages up (XenForo, Invision,
#: phpBB, Discourse: 0515 0.70 to 0.95, 2081 0.65 to 0.94), 6 down (by 0.02 to 0.07, threads whose readers
#: kept the quotes); any quote so repeated, 0.832 too, but 9 pages down (0546 0.85 to 0.72, a quoted
#: sentence).
MIN_QUOTE_WORDS = 25
QUOTE_TAIL = 60
#: A note of a post's editing, its date among its words, is the forum's, not the post's ("Edited April 18,
#: 2024 by ldubs": Invision, phpBB, FluxBB, XenForo). Measured on the tuned part of wcxb-dev (WCXB, Foley
#: 2026, CC-BY-4.0), whose readers left them out: forums 0.8325 to 0.8331, 5 pages up, none down.
_EDIT_NOTE = re.compile(r"(?:last\s+)?edited\s+(?:\S+\s+){0,2}\S*\d.*\bby\b|last\s+edited\s*(?:by\b|:)", re.IGNORECASE)
MAX_EDIT_NOTE_WORDS = 16
#: A thread needs this many posts to be read as one.
MIN_POSTS = 2
#: A post whose author and date no markup names shows them as the short text before its body in its
#: container ("keepingsanity · 03/03/2026 19:49", "#2 2024-08-03 14:22:38"): at most this many words, one of
#: them with a digit (a date, a post's number; a title before an excerpt has none).
MAX_HEADING_WORDS = 8


@dataclass
class Post:
    body: etree._Element
    author: str | None = None
    date: str | None = None
    #: The text before the body, as the page shows it, when neither author nor date is marked.
    heading: str | None = None


def _is_body_prop(element) -> bool:
    props = element.get("itemprop")
    return bool(props) and not _BODY_PROPS.isdisjoint(props.split())


def _post_scope(element):
    """The nearest item around ``element`` (itself excluded) when it is a post's item, else None."""
    for ancestor in element.iterancestors():
        if ancestor.get("itemscope") is not None or ancestor.get("itemtype"):
            return ancestor if _POST_ITEM.search(ancestor.get("itemtype") or "") else None
    return None


def _item_type(body) -> str:
    """The type of the post's item around ``body``, or ""."""
    scope = _post_scope(body)
    return (scope.get("itemtype") or "") if scope is not None else ""


def _remark(body) -> bool:
    """Whether ``body`` is the text of a ``Comment`` within a ``Question`` or ``Answer`` item: a remark on a
    question or an answer (Stack Exchange's comments), not a post of the thread."""
    scope = _post_scope(body)
    if scope is None or "Comment" not in (scope.get("itemtype") or ""):
        return False
    return any(_QA_ITEM.search(a.get("itemtype") or "") for a in scope.iterancestors())


def _outermost(elements: list) -> list:
    chosen = set(elements)
    return [el for el in elements if not any(a in chosen for a in el.iterancestors())]


def _innermost(elements: list) -> list:
    """The elements that hold none of the others: a post's message within the frame that shows its
    author's profile beside it (FluxBB's ``postmsg`` within its ``postbody``)."""
    holding = {a for el in elements for a in el.iterancestors()}
    return [el for el in elements if el not in holding]


def _named_bodies(doc) -> list:
    """The innermost elements whose class or id names a post body (``_BODY_CLASS``, ``_BODY_ID``)."""
    body_class: dict[str, bool] = {}  # a page's elements share a few classes: each is searched once
    named = []
    for el in _NAMED(doc):
        classes = el.get("class") or ""
        if classes not in body_class:
            body_class[classes] = bool(_BODY_CLASS.search(classes))
        if body_class[classes] or _BODY_ID.match(el.get("id") or "") \
                or el.get("data-role") == "commentContent":  # Invision Community
            named.append(el)
    return [el for el in _innermost(named) if not _in_signature(el)]


def _in_signature(element) -> bool:
    """Whether ``element`` is or lies in a poster's signature (XenForo's ``message-signature`` holds a
    ``bbWrapper`` as its posts do, FluxBB's is ``postsignature postmsg``): under each of their posts, not one."""
    return any(_SIGNATURE.search(e.get("class") or "") for e in (element, *element.iterancestors()))


def _names_more(named: list, marked: list) -> bool:
    """Whether the class-named bodies are the marked ones and more: each marked body holds one or lies in
    one, and there are more of them. A forum that marks its replies but not its first post (XenForo themes
    whose opening post is drawn apart, without ``itemprop="text"``) names them all alike.

    Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0), with signatures left out of the
    named bodies: forums 0.806 to 0.814, 12 pages up (4312 0.62 to 0.81, 0534 0.84 to 0.99), 7 down, two of
    them by 0.1 (XenForo threads whose replies quote the opening post: WCXB's readers copied the quotes as
    the page shows them, collapsed to their first lines, so the opening post's words were already counted)."""
    if len(named) <= len(marked):
        return False
    chosen = set(named)
    holding = {a for el in named for a in el.iterancestors()}
    return all(body in chosen or body in holding or any(a in chosen for a in body.iterancestors())
               for body in marked)


def _bodies(doc) -> list:
    marked = [el for el in _PROPS(doc) if _is_body_prop(el) and _post_scope(el) is not None]
    marked = _outermost(marked)
    named = _named_bodies(doc)
    if len(marked) >= MIN_POSTS and not _names_more(named, marked):
        return marked
    return named if len(named) >= MIN_POSTS else marked


def _containers(bodies: list) -> list:
    """Each body's container: the largest ancestor holding no other body (bodies are in document order,
    so one that held another would hold a neighbour)."""
    lineage = [set(body.iterancestors()) for body in bodies]
    out = []
    for i, body in enumerate(bodies):
        neighbours = [lineage[j] for j in (i - 1, i + 1) if 0 <= j < len(bodies)]
        container = body
        for ancestor in body.iterancestors():
            if ancestor.tag in ("body", "html") or any(ancestor in n for n in neighbours):
                break
            container = ancestor
        out.append(container)
    return out


def _outside(container, body):
    """The elements of ``container`` that are not in ``body``, in document order, then those in ``body``
    (phpBB writes its byline inside the post body). Which are in ``body`` is told by one walk of it, not
    by walking the ancestors of each element (on a blog whose comments fill the page, a fifth of its
    extraction time: the author and the date of each comment are searched for in its container)."""
    below = set(body.iter())
    inside = []
    for element in container.iter():
        if element is body or not isinstance(element.tag, str):
            continue
        if element in below:
            inside.append(element)
            continue
        yield element
    yield from inside


def _short_text(element, limit: int) -> str | None:
    text = " ".join(element.text_content().split())
    return text if text and len(text.split()) <= limit else None


def _author(container, body) -> str | None:
    for element in _outside(container, body):
        props = (element.get("itemprop") or "").split()
        if "author" in props or "creator" in props:
            named = element.xpath(".//*[@itemprop='name']")
            if named:
                found = named[0].get("content") or _short_text(named[0], MAX_AUTHOR_WORDS)
            else:
                found = element.get("content") or _short_text(element, MAX_AUTHOR_WORDS)
            if found and found.strip():
                return found.strip()
    named = [element for element in _outside(container, body)
             if _AUTHOR_CLASS.search(element.get("class") or "") or element.get("rel") == "author"]
    holding = {a for element in named for a in element.iterancestors()}
    # The innermost first, not a profile box around the name (Invision's author pane: name, rank, post count).
    # Measured on the tuned part of wcxb-dev (WCXB, Foley 2026, CC-BY-4.0): forums 0.8323 to 0.8325, 2 pages
    # up, none down.
    for element in sorted(named, key=lambda element: element in holding):
        found = _short_text(element, MAX_AUTHOR_WORDS)
        if found:
            return found
    return None


def _date(container, body) -> str | None:
    """The post's date: the first one marked that the page shows with its year, else the first marked one
    in ISO 8601 (or as shown when it cannot be read), else a short text with a digit in an element named a
    date."""
    marked = [element for element in _outside(container, body)
              if element.tag == "time" or not _DATE_PROPS.isdisjoint((element.get("itemprop") or "").split())]
    shown = [_short_text(element, MAX_DATE_WORDS) for element in marked]
    for text in shown:
        if text and _FULL_DATE.search(text):
            return text
    for element, text in zip(marked, shown):
        value = element.get("datetime") or element.get("content") or element.get("title")
        found = iso_date(value) if value else None
        if found:
            return found
        if text:
            return text
    for element in _outside(container, body):
        if _DATE_CLASS.search(element.get("class") or ""):
            found = _short_text(element, MAX_DATE_WORDS)
            if found and re.search(r"\d", found):
                return found
    return None


def _heading(container, body) -> str | None:
    """The text ``container`` shows before ``body`` (scripts and styles left out) when it is a post's
    author and date: ``MAX_HEADING_WORDS`` at most, a digit among them. Else None."""
    found: list[str] = []  # its words

    def before(element) -> bool:  # collects the words up to ``body``; True once it is reached, or too many
        if element is body:
            return True
        if not isinstance(element.tag, str) or element.tag in ("script", "style", "template"):
            return False
        found.extend((element.text or "").split())
        for child in element:
            if before(child):
                return True
            found.extend((child.tail or "").split())
            if len(found) > MAX_HEADING_WORDS:
                return True
        return False

    before(container)
    heading = " ".join(found)
    if not found or len(found) > MAX_HEADING_WORDS or not re.search(r"\d", heading):
        return None
    return heading


def thread_posts(doc) -> list[Post]:
    """The posts of a thread on the (uncleaned) page, in page order; [] when it shows fewer than
    ``MIN_POSTS`` (microdata or known class names), or when fewer than half of them show an author or a
    date (then the repeated blocks are not posts). A Q&A page's comments on its question and answers are
    left out (``_remark``)."""
    bodies = [b for b in _bodies(doc) if b.text_content().strip()]
    if len(bodies) < MIN_POSTS:
        return []
    posts = []
    for body, container in zip(bodies, _containers(bodies)):
        post = Post(body, _author(container, body), _date(container, body))
        if not post.author and not post.date:
            post.heading = _heading(container, body)
        posts.append(post)
    if 2 * sum(1 for p in posts if p.author or p.date or p.heading) < len(posts):
        return []
    posts = _without_strays(posts)
    # A Q&A page's comments on its question and answers are remarks, not posts: WCXB's readers (Foley 2026,
    # CC-BY-4.0) left them out on 8 of its 9 tuned Stack Exchange pages (forums 0.774 to 0.787). Only where
    # the page has answers: a forum that marks its first post a Question and its replies Comments keeps them.
    if any(_ANSWER_ITEM.search(_item_type(p.body)) for p in posts):
        posts = [p for p in posts if not _remark(p.body)]
    return posts


def _without_strays(posts: list[Post]) -> list[Post]:
    """``posts`` less those that show no author and lie outside the element holding every post that shows one,
    when most show one: a box in the page's sidebar that is written as posts are (Reddit's community rules
    beside the thread, in the same ``usertext-body`` as its comments) is not a post of the thread. A post that
    its microdata marks is one wherever it lies (a question whose replies are comments within its item)."""
    authored = [p for p in posts if p.author]
    if 2 * len(authored) <= len(posts):
        return posts
    shared = set(authored[0].body.iterancestors())
    for post in authored[1:]:
        shared.intersection_update(post.body.iterancestors())
    # The deepest element holding them all (the first of the first one's ancestors that the others share).
    region = next((a for a in authored[0].body.iterancestors() if a in shared), None)
    return [p for p in posts if p.author or region is None or region in p.body.iterancestors()
            or _post_scope(p.body) is not None]


def only_comments(posts: list[Post]) -> bool:
    """Whether every post is marked a ``Comment`` (the comments under an article, or a forum's replies
    when its first post is not marked otherwise)."""
    scopes = [_post_scope(p.body) for p in posts]
    return all(s is not None and "Comment" in (s.get("itemtype") or "") for s in scopes)


def _repeats_title(heading, title: str) -> bool:
    """Whether ``heading`` is the thread's title, "Re: " before it or not: two words or more that the page's
    ``title`` holds."""
    text = _REPLY.sub("", " ".join(heading.text_content().split())).casefold()
    return len(text.split()) >= 2 and text in title


def _is_edit_note(element) -> bool:
    """Whether ``element``'s text is a note of the post's editing ("Edited April 18, 2024 by ldubs", "Last
    edited by reefer on Mon Mar 03, 2025, edited 1 time in total")."""
    words = element.text_content().split()
    if len(words) > MAX_EDIT_NOTE_WORDS:
        return False
    text = " ".join(words)
    return bool(_EDIT_NOTE.match(text)) and any(c.isdigit() for c in text)


def post_element(post: Post, title: str | None = None):
    """A cleaned copy of the post's body (scripts, forms, chrome and controls removed) for the Markdown
    writer, without the headings that repeat the thread's ``title`` (the page's), "Re: " before it or not."""
    body = copy.deepcopy(post.body)
    body.tail = None
    etree.strip_elements(body, *REMOVED_TAGS, with_tail=False)
    for control in body.xpath(".//*[@role='button']"):
        control.drop_tree()
    notes = [element for element in body.iterdescendants() if isinstance(element.tag, str) and _is_edit_note(element)]
    for note in _outermost(notes):
        note.drop_tree()
    if title:
        folded = " ".join(title.split()).casefold()
        for heading in body.xpath(".//h1|.//h2|.//h3|.//h4|.//h5|.//h6"):
            if _repeats_title(heading, folded):
                heading.drop_tree()
    return body


def drop_repeated_quotes(element, earlier: list[str]) -> None:
    """Removes from a post's ``element`` each quote (``<blockquote>``) of ``MIN_QUOTE_WORDS`` or more whose
    last ``QUOTE_TAIL`` characters are in an earlier post's text (``earlier``, each with its whitespace
    collapsed): a reply quoting an earlier post of the thread repeats it. The end is compared, since the
    quote begins with its attribution ("ada said:")."""
    for quote in element.xpath(".//blockquote"):
        text = " ".join(quote.text_content().split())
        if len(text.split()) >= MIN_QUOTE_WORDS and any(text[-QUOTE_TAIL:] in post for post in earlier):
            quote.drop_tree()


def byline(post: Post) -> str:
    """``**author** · date`` (either part alone when the other is missing), else the post's heading as the
    page shows it, or ""."""
    if not post.author and not post.date:
        return post.heading or ""
    parts = [f"**{post.author}**" if post.author else "", post.date or ""]
    return " · ".join(p for p in parts if p)


def thread_share(posts: list[Post], doc) -> float:
    """The share of the page's visible text (in characters) its posts hold."""
    body = doc.find("body")
    total = text_length(body if body is not None else doc)
    return sum(text_length(p.body) for p in posts) / max(total, 1)
