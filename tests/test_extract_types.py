"""Page types: what kind of page extraction says it read, and how each kind is read (pages written here)."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import html as lxml_html

from webtools.plugins.web_fetch.extract import extract, forum
from webtools.plugins.web_fetch.extract.pagetype import TYPES

URL = "https://forum.test/t/solder-question/42"
REPLY = ("Use a temperature controlled iron at about 350 degrees and keep the tip tinned, REPLY_{n} says, "
         "and clean the pads with alcohol before you start so the solder flows onto them.")


def _discourse_post(n: int, author: str, when: str, text: str, kind: str = "Comment") -> str:
    return f"""<div class="topic-post" itemscope itemtype="http://schema.org/{kind}">
  <div class="topic-meta"><span class="creator" itemprop="author" itemscope itemtype="http://schema.org/Person">
    <a itemprop="url" href="/u/{author}"><span itemprop="name">{author}</span></a></span>
    <time itemprop="datePublished" datetime="{when}">Jan {int(when[8:10])}</time></div>
  <div class="post" itemprop="text"><p>{text}</p></div>
  <div class="post-actions"><a href="/like">Like</a> <a href="/share">Share</a></div>
</div>"""


FORUM = f"""<!doctype html><html><head><title>Which iron for SMD soldering? - Makers Forum</title>
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "DiscussionForumPosting",
"headline": "Which iron for SMD soldering?"}}</script></head><body>
<nav><a href="/">Forum home</a> <a href="/latest">Latest</a></nav>
<h1>Which iron for SMD soldering?</h1>
{_discourse_post(0, "ada", "2025-01-05T10:00:00Z",
                 "I am new to surface mount parts and my joints keep bridging. QUESTION_BODY which iron and "
                 "which tip do you use for 0603 resistors and small chips?", "DiscussionForumPosting")}
{"".join(_discourse_post(n, f"user{n}", f"2025-01-0{n + 5}T12:00:00Z", REPLY.format(n=n)) for n in range(1, 4))}
<footer>Powered by forum software FOOTER_TEXT</footer>
</body></html>"""

PHPBB = """<html><head><title>Pump noise at night - Aquarium board</title></head><body>
<div id="page-body"><h2 class="topic-title">Pump noise at night</h2>
<div class="post bg1"><div class="inner"><div class="postbody">
  <p class="author">by <strong><a class="username" href="/u/12">reefer</a></strong> &raquo; Mon Mar 03, 2025 9:12 pm</p>
  <div class="content">My return pump hums loudly every night once the lights go off. FIRST_POST is it the impeller or
  the way the pump sits on the glass of the sump?</div></div>
  <dl class="postprofile"><dt>reefer</dt><dd>Posts: 31</dd></dl></div></div>
<div class="post bg2"><div class="inner"><div class="postbody">
  <p class="author">by <strong><a class="username" href="/u/77">sumpguy</a></strong>
  &raquo; Tue Mar 04, 2025 7:40 am</p>
  <div class="content">Put the pump on a piece of foam mat and check the impeller shaft for wear. SECOND_POST a worn
  shaft rattles most when the water level in the sump drops at night.</div></div>
  <dl class="postprofile"><dt>sumpguy</dt><dd>Posts: 802</dd></dl></div></div>
</div></body></html>"""


def test_a_threads_every_post_comes_with_its_author_and_date():
    result = extract(FORUM, URL)
    assert result.type == "forum"
    text = result.text
    assert "QUESTION_BODY" in text
    for n in range(1, 4):
        assert f"REPLY_{n}" in text
        assert f"**user{n}** · 2025-01-0{n + 5}T12:00:00+00:00" in text
    assert "**ada** · 2025-01-05T10:00:00+00:00" in text
    # In page order, each byline before its post.
    assert text.index("**ada**") < text.index("QUESTION_BODY") < text.index("**user1**") < text.index("REPLY_1")
    assert "FOOTER_TEXT" not in text and "Forum home" not in text


def test_a_posts_date_shown_with_its_year_is_given_as_the_page_shows_it():
    # "Jan 6" above names no year: its ISO form is given. A date shown in full is given as shown, though a
    # <meta> before it marks the same date unseen.
    posts = "".join(_discourse_post(n, f"user{n}", f"2024-05-0{n}T08:45:00Z", REPLY.format(n=n),
                                    "DiscussionForumPosting" if n == 1 else "Comment")
                    .replace(f">Jan {n}</time>", f">May {n}, 2024, 8:45am</time>")
                    .replace('<div class="topic-meta">', f'<meta itemprop="datePublished" '
                             f'content="2024-05-0{n}T08:45:00Z"><div class="topic-meta">')
                    for n in range(1, 4))
    page = f"<html><head><title>Irons - Makers Forum</title></head><body><h1>Irons</h1>{posts}</body></html>"
    result = extract(page, URL)
    assert result.type == "forum"
    for n in range(1, 4):
        assert f"**user{n}** · May {n}, 2024, 8:45am\n\nUse a temperature" in result.text
    assert "T08:45" not in result.text


def test_a_forum_without_microdata_is_read_by_its_post_bodies():
    result = extract(PHPBB, "https://reef.test/viewtopic.php?t=9")
    assert result.type == "forum"
    assert "FIRST_POST" in result.text and "SECOND_POST" in result.text
    assert result.text.index("FIRST_POST") < result.text.index("SECOND_POST")
    assert "reefer" in result.text and "sumpguy" in result.text


def test_a_posts_heading_repeating_the_threads_title_and_its_controls_are_left_out():
    posts = "".join(f"""<div class="post"><div class="postbody"><h3><a href="#p{n}">{"Re: " * (n > 1)}Pump noise
at night</a></h3><p class="author">by <strong><a class="username" href="/u/{n}">member{n}</a></strong></p>
<div class="content"><blockquote><div>The pump hums QUOTED_{n}</div><div class="expand"><a role="button">Click to
expand CONTROL_{n}</a></div></blockquote><h3>Foam mat under the pump</h3>Put the pump on a piece of foam MESSAGE_{n}
and check the impeller shaft for wear.</div></div></div>""" for n in range(1, 4))
    page = f"<html><head><title>Pump noise at night - Aquarium board</title></head><body>{posts}</body></html>"
    result = extract(page, "https://reef.test/viewtopic.php?t=9")
    assert result.type == "forum"
    assert all(f"MESSAGE_{n}" in result.text and f"QUOTED_{n}" in result.text for n in range(1, 4))
    assert "Pump noise" not in result.text and "CONTROL_" not in result.text and "Click to" not in result.text
    # A heading of the post's own is kept.
    assert result.text.count("### Foam mat under the pump") == 3


@given(st.lists(st.text(alphabet="abcxyz ", min_size=1, max_size=8), min_size=1, max_size=4),
       st.integers(min_value=0, max_value=3), st.sampled_from(["Re: ", "RE:", "re :  "]))
@settings(max_examples=200, deadline=None)
def test_a_heading_repeats_the_title_it_is_part_of_after_any_re(words, replies, reply):
    title = " ".join(" ".join(words).split())
    heading = lxml_html.fragment_fromstring(f"<h3>{reply * replies}{title}</h3>")
    page_title = f"{title} - board".casefold()
    assert forum._repeats_title(heading, page_title) == (len(title.split()) >= 2)
    assert not forum._repeats_title(heading, "another thread - board")


def _xenforo_post(n: int, marked: bool) -> str:
    item = ' itemscope itemtype="https://schema.org/Comment"' if marked else ""
    return f"""<article class="message" id="js-post-{n}"{item}><div class="message-user">
<a class="username" itemprop="author" href="/u/{n}">member{n}</a></div>
<time datetime="2024-07-0{n}T10:00:00Z">Jul {n}, 2024</time>
<article class="message-body"{' itemprop="text"' if marked else ""}><div class="bbWrapper">Soak the beans
overnight and cook them slowly POST_{n}, with a bay leaf and no salt until the end.</div></article>
<aside class="message-signature"><div class="bbWrapper">SIGNATURE_{n} my kitchen blog</div></aside></article>"""


def test_a_threads_first_post_that_its_microdata_leaves_unmarked_is_read_with_the_replies():
    # The replies are marked Comments, the opening post is not: the post bodies' class names all of them.
    # The signature under each post names its text as a post's, and is not one.
    page = f"""<html><head><title>Cooking dried beans - Kitchen forum</title>
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "DiscussionForumPosting",
"headline": "Cooking dried beans"}}</script></head><body><h1>Cooking dried beans</h1>
{"".join(_xenforo_post(n, n > 1) for n in range(1, 5))}</body></html>"""
    result = extract(page, "https://kitchen.test/threads/beans.12/")
    assert result.type == "forum"
    assert all(f"**member{n}** · Jul {n}, 2024\n\nSoak the beans" in result.text for n in range(1, 5))
    assert "POST_1" in result.text and "SIGNATURE_" not in result.text


def test_a_replys_quote_of_a_whole_earlier_post_is_left_out_and_a_quoted_sentence_kept():
    first = ("My sourdough starter smells of nail polish remover after three days on the counter, and it "
             "rises a little then falls flat again. I feed it once a day with rye flour and tap water. Is it "
             "dead, or is this smell a stage it goes through? FIRST_POST")
    replies = [f'<blockquote><div class="title">member1 said:</div><div>{first}</div></blockquote>'
               "That smell means it is hungry: feed it twice a day and it will settle in a week. WHOLE_QUOTE_REPLY",
               "<blockquote>I feed it once a day with rye flour and tap water.</blockquote>Rye is fine, but use "
               "filtered water if yours is chlorinated."]
    posts = "".join(f"""<article class="message"><a class="username" href="/u/{n}">member{n}</a>
<time datetime="2024-07-0{n}T10:00:00Z">Jul {n}, 2024</time><div class="bbWrapper">{text}</div></article>"""
                    for n, text in enumerate([first, *replies], start=1))
    page = f"<html><head><title>Smelly starter - Bread forum</title></head><body>{posts}</body></html>"
    result = extract(page, "https://bread.test/threads/starter.3/")
    assert result.type == "forum"
    assert result.text.count("FIRST_POST") == 1 and "WHOLE_QUOTE_REPLY" in result.text
    assert result.text.count("I feed it once a day with rye flour and tap water.") == 2  # the first post's, quoted


def test_a_posts_author_is_the_name_within_its_profile_box():
    # The box is named an author's, as is the name within it; the box holds the rank and the post count too.
    posts = "".join(f"""<article class="comment"><aside class="comment_author"><h3 class="pane_author"><a
href="/profile/{n}">member{n}</a></h3><span>Member</span> <span>{n}5</span></aside>
<time datetime="2024-07-0{n}T10:00:00Z">Jul {n}, 2024</time><div class="post-content">Check the fuse in the plug
first POST_{n}, then the switch on the back of the lamp.</div></article>""" for n in range(1, 4))
    page = f"<html><head><title>Lamp dead - Fix-it board</title></head><body>{posts}</body></html>"
    result = extract(page, "https://fixit.test/topic/9-lamp-dead/")
    assert result.type == "forum"
    assert all(f"**member{n}** · Jul {n}, 2024\n\nCheck the fuse" in result.text for n in range(1, 4))
    assert "Member" not in result.text


def test_a_note_of_a_posts_editing_is_left_out():
    posts = "".join(f"""<div class="post"><a class="username" href="/u/{n}">member{n}</a>
<time datetime="2024-07-0{n}T10:00:00Z">Jul {n}, 2024</time><div class="post-content"><p>Edited by hand, the
config file works POST_{n}.</p><p><strong>Edited July {n}, 2024 by member{n}</strong> <a href="/h">(see edit
history)</a></p></div></div>""" for n in range(1, 4))
    page = f"<html><head><title>Config - Help board</title></head><body>{posts}</body></html>"
    result = extract(page, "https://help.test/topic/4-config/")
    assert result.type == "forum"
    assert all(f"POST_{n}" in result.text for n in range(1, 4))
    assert "Edited July" not in result.text and "edit history" not in result.text


@given(st.sampled_from(["Edited", "Last edited", "edited"]), st.text(alphabet="abcxyz ", max_size=30),
       st.integers(min_value=1, max_value=31), st.integers(min_value=0, max_value=20))
@settings(max_examples=200, deadline=None)
def test_an_edit_note_is_short_and_dated(lead, name, day, padding):
    note = f"{lead} July {day}, 2024 by {name} " + "word " * padding
    element = lxml_html.fragment_fromstring(f"<p>{note}</p>")
    assert forum._is_edit_note(element) == (len(note.split()) <= forum.MAX_EDIT_NOTE_WORDS)
    undated = lxml_html.fragment_fromstring(f"<p>{lead} by {name}</p>")
    assert not forum._is_edit_note(undated)


def test_posts_whose_author_and_date_no_markup_names_show_them_as_the_text_before_them():
    # Each post's name and date are plain text in a box before its body: they are its byline.
    posts = "".join(f'<div class="reply" id="{n}"><div class="font-bold">member{n} · <span>03/03/2026 19:{n}0</span>'
                    f'</div><div class="post-body"><p>Bake the bread at a lower heat for longer POST_{n}, and keep '
                    f"the lid on for the first twenty minutes so the crust stays soft.</p></div></div>"
                    for n in range(1, 5))
    page = (f"<html><head><title>Soft crust? - Baking talk</title></head><body><nav><a href='/'>Talk</a></nav>"
            f"<h1>Soft crust?</h1>{posts}</body></html>")
    result = extract(page, "https://talk.test/t/soft-crust")
    assert result.type == "forum"
    for n in range(1, 5):
        assert f"member{n} · 03/03/2026 19:{n}0\n\nBake the bread at a lower heat for longer POST_{n}" \
            in result.text


def test_a_posts_message_within_the_frame_that_shows_its_authors_profile_is_the_post():
    # FluxBB's post: its frame ("postbody") holds the author's profile and the message ("postmsg").
    posts = "".join(f"""<div class="blockpost"><h2><span>#{n} <a href="/p/{n}">2024-08-0{n} 10:59:47</a></span></h2>
<div class="postbody"><div class="postleft"><dl><dt><strong class="username">member{n}</strong></dt>
<dd>Registered: 2020-01-0{n}</dd><dd>Posts: {n}00 PROFILE_{n}</dd></dl></div>
<div class="postright"><div class="postmsg"><p>Use the lighter theme and turn the sidebar off MESSAGE_{n}, the page then
fits a phone's screen without scrolling sideways.</p></div></div></div></div>""" for n in range(1, 5))
    page = (f"<html><head><title>Forum themes - Board</title></head><body><h1>Forum themes</h1>{posts}"
            "</body></html>")
    result = extract(page, "https://board.test/viewtopic.php?id=7")
    assert result.type == "forum"
    assert all(f"MESSAGE_{n}" in result.text and f"**member{n}**" in result.text for n in range(1, 5))
    assert "PROFILE_" not in result.text and "Registered" not in result.text


def _remarks(author: str, remarks: int) -> str:
    return "".join(
        f'<li itemprop="comment" itemscope itemtype="https://schema.org/Comment"><span class="comment-copy" '
        f'itemprop="text">Did you try it with the lid closed, REMARK_{author}_{n}?</span> <a class="comment-user" '
        f'itemprop="author" href="/u/c{n}">critic{n}</a> <time itemprop="dateCreated" '
        f'datetime="2025-02-0{n}T08:00:00Z">Feb {n}</time></li>' for n in range(1, remarks + 1))


def _qa_post(kind: str, prop: str, author: str, text: str, remarks: int) -> str:
    return f"""<div itemprop="{prop}" itemscope itemtype="https://schema.org/{kind}">
<div class="s-prose" itemprop="text"><p>{text}</p></div>
<div class="user-details" itemprop="author" itemscope itemtype="https://schema.org/Person">
<a itemprop="name" href="/u/{author}">{author}</a></div>
<time itemprop="dateCreated" datetime="2025-01-05T10:00:00Z">Jan 5</time>
<ul class="comments-list">{_remarks(author, remarks)}</ul></div>"""


def test_a_questions_and_its_answers_comments_are_left_out_of_the_thread():
    # Stack Exchange's comments are Comment items within the question's or an answer's item: remarks on a
    # post, which WCXB's readers left out of the thread (8 of its 9 tuned Q&A pages).
    answers = "".join(_qa_post("Answer", "suggestedAnswer", f"helper{n}",
                               f"Descale the kettle with citric acid and rinse it twice ANSWER_{n}, the limescale "
                               "on the element is what makes it rumble.", 2) for n in range(1, 3))
    page = f"""<html><head><title>Why is my kettle loud? - Home Q&amp;A</title></head><body>
<div itemscope itemtype="https://schema.org/QAPage"><div itemprop="mainEntity" itemscope
itemtype="https://schema.org/Question"><h1 itemprop="name">Why is my kettle loud?</h1>
<div class="s-prose" itemprop="text"><p>My kettle has become very loud when it boils QUESTION_BODY, louder each
week. What causes the noise?</p></div>
<div itemprop="author" itemscope itemtype="https://schema.org/Person"><a itemprop="name" href="/u/asker">asker</a></div>
<ul class="comments-list">{_remarks("asker", 3)}</ul>
{answers}</div></div></body></html>"""
    result = extract(page, "https://qa.test/questions/1/why-is-my-kettle-loud")
    assert result.type == "forum"
    assert "QUESTION_BODY" in result.text and "ANSWER_1" in result.text and "ANSWER_2" in result.text
    assert "REMARK_" not in result.text and "critic1" not in result.text


def test_a_forum_whose_replies_are_comments_on_its_question_keeps_them():
    # No answers: the Comments within the Question item are the thread's replies.
    page = f"""<html><head><title>Kettle noise - Home board</title></head><body>
<div itemscope itemtype="https://schema.org/QAPage">
{_qa_post("Question", "mainEntity", "asker", "My kettle has become very loud when it boils QUESTION_BODY, louder "
          "each week. What causes the noise?", 3)}</div></body></html>"""
    result = extract(page, "https://board.test/t/kettle-noise")
    assert result.type == "forum"
    assert "QUESTION_BODY" in result.text and all(f"REMARK_asker_{n}" in result.text for n in range(1, 4))


def test_comments_under_an_article_leave_it_an_article():
    article = f"""<html><head><title>Growing tomatoes on a balcony</title>
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "BlogPosting",
"headline": "Growing tomatoes on a balcony"}}</script></head><body><article><h1>Growing tomatoes on a balcony</h1>
<p>{"Tomatoes need six hours of sun, a deep pot and water every evening in summer. " * 8}ARTICLE_BODY</p></article>
<section class="comments">{"".join(_discourse_post(n, f"reader{n}", "2025-06-01", f"Nice post COMMENT_{n} thanks "
                                                    "for the tips about watering in the evening.")
                                     for n in range(3))}</section></body></html>"""
    result = extract(article, "https://garden.test/tomatoes")
    assert result.type == "article"
    assert "ARTICLE_BODY" in result.text


def _listing_items(result) -> list[str]:
    """A page read as a listing: its list items' lines (each card's Markdown line)."""
    assert result.type == "listing"
    return [line for line in result.text.split("\n") if line.startswith("- ")]


def _card(n: int) -> str:
    return f"""<div class="course-card"><img src="/img/{n}.png" alt="">
<h3><a href="/courses/{n}">Course {n}: Data analysis with spreadsheets</a></h3>
<p class="meta">6 weeks · beginner</p>
<p>Learn to clean, sort and chart data CARD_{n} with formulas and pivot tables.</p>
</div>"""


LISTING = f"""<html><head><title>All courses | Learn Online</title></head><body>
<nav><a href="/">Home</a><a href="/about">About</a></nav>
<main><h1>All courses</h1><p>Our catalogue of short online courses.</p>
<div class="grid">{"".join(_card(n) for n in range(1, 13))}</div></main>
<footer>FOOTER_TEXT</footer></body></html>"""


def test_a_listings_every_card_is_a_list_item_with_its_link():
    result = extract(LISTING, "https://learn.test/courses")
    items = _listing_items(result)
    assert len(items) == 12
    for n, item in enumerate(items, 1):
        assert f"](https://learn.test/courses/{n})" in item and f"CARD_{n}" in item
    assert "FOOTER_TEXT" not in result.text


def _story_card(n: int) -> str:
    """A blog's card whose links are most of its words (its category, its title, its two authors): the Markdown
    writes such links as text."""
    return f"""<li class="post-card"><a href="/topic/{n % 3}">Topic {n % 3}</a>
<h3><a href="/posts/{n}">Story {n} on tides</a></h3><p>Why STORY_{n} matters.</p>
<p><a href="/author/a{n}">Ann Author</a> &amp; <a href="/author/b{n}">Bob Writer</a></p></li>"""


def test_a_cards_link_is_its_titles_and_given_on_its_title():
    page = LISTING.replace(f'<div class="grid">{"".join(_card(n) for n in range(1, 13))}</div>',
                           f'<ul class="grid">{"".join(_story_card(n) for n in range(1, 13))}</ul>')
    items = _listing_items(extract(page, "https://learn.test/blog"))
    assert len(items) == 12
    for n, item in enumerate(items, 1):
        assert f"[Story {n} on tides](https://learn.test/posts/{n})" in item, item
        assert "https://learn.test/topic/" not in item


def test_a_sites_front_page_declaring_one_article_is_read_as_the_listing_it_is():
    page = LISTING.replace("<head>", '<head><script type="application/ld+json">{"@context": "https://schema.org", '
                                     '"@type": "TechArticle", "headline": "Home"}</script>')
    assert extract(page, "https://learn.test/courses").type == "documentation"
    items = _listing_items(extract(page, "https://learn.test/"))
    assert len(items) == 12


def test_a_shops_category_of_priced_cards_is_a_collection():
    shop = LISTING.replace("6 weeks · beginner", "$24.99").replace("All courses", "Rain jackets")
    result = extract(shop, "https://shop.test/c/rain-jackets")
    assert result.type == "collection"
    assert result.text.count("$24.99") == 12


def _shop_card(n: int) -> str:
    # The product's name in its image's caption, its heading and its link; its price for two screen sizes.
    return (f'<li class="product-card"><a href="/p/{n}"><figure><figcaption>Wool Beanie {n}</figcaption></figure></a>'
            f'<h3><a href="/p/{n}">Wool Beanie {n}</a></h3><p>WOOL Beanie {n}</p>'
            f'<p class="price">$1{n}.50</p><p class="price mobile">$1{n}.50</p><p>Knitted in Scotland</p></li>')


def test_a_cards_name_and_price_written_twice_come_once_in_its_line():
    page = (f'<html><head><title>Hats | Shop</title></head><body><main><h1>Hats</h1><ul class="grid">'
            f'{"".join(_shop_card(n) for n in range(1, 13))}</ul></main></body></html>')
    result = extract(page, "https://shop.test/c/hats")
    assert result.type == "collection"
    items = [line for line in result.text.split("\n") if line.startswith("- ")]
    assert len(items) == 12
    for n, item in enumerate(items, 1):
        assert item.count(f"Beanie {n} ") + item.count(f"Beanie {n}]") == 1, item
        assert item.count(f"$1{n}.50") == 1 and "Knitted in Scotland" in item
        assert f"](https://shop.test/p/{n})" in item


def _award(n: int) -> str:
    return (f'<div class="category"><h3>Category {n} AWARD_{n}</h3><p>Winner</p>'
            f'<h4><a href="/projects/{n}">Project {n} by a studio of the city</a></h4>'
            f'<p>Honoree</p><h4><a href="/projects/{n}b">Another project {n}</a></h4></div>')


def test_a_dated_pages_text_in_pieces_of_many_cards_is_not_an_article_one_card_holds():
    from webtools.plugins.web_fetch.extract import listing
    from webtools.plugins.web_fetch.extract.choice import words

    doc = lxml_html.fromstring(f'<html><body><div class="awards">{"".join(map(_award, range(1, 13)))}</div>'
                               "</body></html>")
    cards = listing.find_cards(doc.find("body"))
    assert cards is not None and len(cards.items) == 12

    def words_of(card):
        return words(cards.text(card))
    # The extractors kept each category's heading and none of its winners: a few words of every card.
    headings = words(" ".join(f"Category {n} AWARD_{n}" for n in range(1, 13)))
    assert listing.in_pieces(cards, headings, words_of)
    # A text one card holds most of (an article, its comments read as cards) is not in pieces.
    assert not listing.in_pieces(cards, words_of(cards.items[3]), words_of)


PRODUCT = """<html><head><title>Trail shoe X2 | Shoe Shop</title><script type="application/ld+json">{"@context":
"https://schema.org", "@type": "Product", "name": "Trail shoe X2", "brand": {"@type": "Brand", "name": "Peakfoot"},
"description": "A light trail shoe with a grippy sole for wet rock and mud, and a cushioned midsole.",
"offers": {"@type": "Offer", "price": "89.00", "priceCurrency": "EUR", "availability": "https://schema.org/InStock"},
"additionalProperty": [{"@type": "PropertyValue", "name": "Drop", "value": "6 mm"},
{"@type": "PropertyValue", "name": "Weight", "value": "290 g"}]}</script></head><body>
<nav><a href="/">Shop</a> <a href="/men">Men</a></nav>
<h1>Trail shoe X2</h1><p class="price">89,00 €</p><button>Add to cart</button>
<div class="tabs"><div class="tab-panel">{story}</div>
<div class="tab-panel"><h2>Reviews</h2><p>No reviews yet.</p></div></div>
<footer>FOOTER_TEXT</footer></body></html>"""
STORY = ("<p>Built for long days in the hills, the X2 keeps its grip on wet granite and loose gravel. STORY_TEXT "
         "Its upper dries fast after a river crossing, and the toe cap takes the knocks of rocky descents.</p>")


def test_a_products_price_availability_description_and_specifications_come_with_its_text():
    page = PRODUCT.replace("{story}", STORY).replace('<p class="price">89,00 €</p>', "")
    result = extract(page, "https://shoes.test/x2")
    assert result.type == "product"
    text = result.text
    assert text.startswith("# Trail shoe X2\n\nPrice: 89.00 EUR · Availability: in stock · Brand: Peakfoot")
    assert "A light trail shoe with a grippy sole" in text  # the JSON-LD description the page does not show
    assert "- Drop: 6 mm" in text and "- Weight: 290 g" in text
    assert "STORY_TEXT" in text
    assert "FOOTER_TEXT" not in text


def test_a_products_json_ld_text_that_opens_like_a_heading_is_no_heading_of_the_markdown():
    from markdown_it import MarkdownIt

    # A description and a specification's name the page writes as Markdown would read a heading: only the
    # product's name (its <h1>) is one, as for the page's text (the writer's ``_MARKUP_LIKE``).
    page = PRODUCT.replace("{story}", STORY).replace('<p class="price">89,00 €</p>', "").replace(
        '"description": "A light', '"description": "## A light').replace('"name": "Drop"', '"name": "# Drop"')
    text = extract(page, "https://shoes.test/x2").text
    assert "\\## A light trail shoe" in text and "- \\# Drop: 6 mm" in text
    tokens = MarkdownIt("commonmark").parse(text)
    assert [tokens[n + 1].content for n, token in enumerate(tokens) if token.type == "heading_open"] == [
        "Trail shoe X2"]


def test_a_products_name_its_heading_gives_comes_first_in_its_text_and_an_articles_headline_does_not():
    # The <h1> like the title ("Trail shoe X2 | Shoe Shop") is the title's, left out of an article's text; a
    # product's name is its text.
    text = extract(PRODUCT.replace("{story}", STORY), "https://shoes.test/x2").text
    assert text.startswith("# Trail shoe X2\n\n") and text.count("Trail shoe X2") == 1
    story = ("<html><head><title>Rain on the hills | The Daily</title></head><body><article><h1>Rain on the hills</h1>"
             + STORY * 3 + "</article></body></html>")
    assert "Rain on the hills" not in extract(story, "https://news.test/rain").text


def test_a_page_whose_microdata_declares_a_product_is_not_given_its_whole_main():
    # A store's page declaring its game in microdata only: its <main> holds the game's tags around its text.
    story = ("<p>Tunnel Runner is a racing game for two players on one screen. DESC_TEXT You steer a small train "
             "through caves and over bridges, and collect coal to go faster than the other player.</p>")
    tags = "".join(f'<div class="tag"><a href="/tag/{n}">Tag number {n} of the game</a></div>' for n in range(40))

    def page(attributes):
        return ("<html><head><title>Tunnel Runner on Game Store</title></head><body><nav><a href='/'>Store</a></nav>"
                f"<main><div {attributes}><h1>Tunnel Runner</h1>{story * 2}<div class='tags'>{tags}</div></div></main>"
                "<footer>FOOTER_TEXT</footer></body></html>")
    text = extract(page('itemscope itemtype="http://schema.org/Product"'), "https://games.test/tunnel").text
    assert "DESC_TEXT" in text and "Tag number" not in text
    assert "Tag number" in extract(page('class="game"'), "https://games.test/tunnel").text  # its <main>, as before


def test_a_products_offer_is_read_from_a_capitalised_key_or_its_first_variant():
    # A shop writes "Offers"; a ProductGroup (a shoe's colours and sizes) gives each variant its offer.
    page = PRODUCT.replace("{story}", STORY).replace('<p class="price">89,00 €</p>', "")
    assert "Price: 89.00 EUR" in extract(page.replace('"offers":', '"Offers":'), "https://shoes.test/x2").text
    group = page.replace('"@type": "Product"', '"@type": "ProductGroup"').replace(
        '"offers": {', '"hasVariant": [{"@type": "Product", "name": "Trail shoe X2, 42", "offers": {').replace(
        '"availability": "https://schema.org/InStock"}', '"availability": "https://schema.org/InStock"}}]')
    assert "Price: 89.00 EUR · Availability: in stock" in extract(group, "https://shoes.test/x2").text


SHOWN_OFFER = """<html><head><title>Desk lamp L1 | Lamp Shop</title>{meta}</head><body>
<nav><a href="/">Shop</a> <a href="/lamps">Lamps</a></nav>
<div {scope}><h1>Desk lamp L1</h1>{price}<button>Add to cart</button>
<p>A desk lamp with a warm light and a heavy base, LAMP_TEXT its arm bends to light a page or a keyboard, and its
switch dims it in four steps for the evening.</p><p>It takes a standard bulb and comes with a cloth cable of two
metres, and its shade stays cool to the touch after hours of use.</p></div>
<footer>FOOTER_TEXT</footer></body></html>"""


def test_a_product_page_without_json_ld_gives_the_price_its_metadata_or_microdata_declare():
    # The page shows its price with a script: Open Graph's product metadata or microdata give it.
    meta = ('<meta property="og:type" content="product"><meta property="product:price:amount" content="$45.00">'
            '<meta property="product:price:currency" content="USD"><meta property="og:availability" content="oos">')
    text = extract(SHOWN_OFFER.format(meta=meta, scope="", price=""), "https://lamps.test/l1").text
    assert "Price: 45.00 USD · Availability: out of stock" in text and "LAMP_TEXT" in text
    microdata = ('<span itemprop="offers" itemscope itemtype="https://schema.org/Offer"><meta itemprop="price" '
                 'content="45"><meta itemprop="priceCurrency" content="USD"><link itemprop="availability" '
                 'href="https://schema.org/InStock"></span>')
    scope = 'itemscope itemtype="https://schema.org/Product"'
    text = extract(SHOWN_OFFER.format(meta="", scope=scope, price=microdata), "https://lamps.test/l1").text
    assert "Price: 45 USD · Availability: in stock" in text
    shown = SHOWN_OFFER.format(meta=meta, scope="", price="<p>$45.00, out of stock</p>")
    assert "Price:" not in extract(shown, "https://lamps.test/l1").text  # the page shows it already


def test_a_product_fact_the_text_gives_already_is_not_repeated():
    shown = STORY.replace("STORY_TEXT", "A light trail shoe with a grippy sole for wet rock and mud, and a "
                                        "cushioned midsole.")
    result = extract(PRODUCT.replace("{story}", shown), "https://shoes.test/x2")
    assert result.text.count("A light trail shoe with a grippy sole") == 1


def test_a_price_availability_or_brand_the_text_shows_is_not_repeated_before_it():
    shown = STORY.replace("STORY_TEXT", "In stock now, from Peakfoot's own workshop.")
    text = extract(PRODUCT.replace("{story}", shown), "https://shoes.test/x2").text
    assert "89,00 €" in text  # the page's own price, as it writes it ("89.00" in its JSON-LD)
    assert "Price:" not in text and "Availability:" not in text and "Brand:" not in text


def test_a_price_whose_fraction_is_zeros_is_found_as_the_page_writes_it():
    page = PRODUCT.replace("{story}", STORY).replace("89,00 €", "$89")
    assert "Price:" not in extract(page, "https://shoes.test/x2").text


def test_a_url_encoded_or_marked_up_json_ld_description_comes_as_its_text():
    for written in ("A%20light%20trail%20shoe%20with%20a%20grippy%20sole%20for%20wet%20rock.",
                    "<p>A light trail shoe <strong>with a grippy sole</strong> for wet rock.</p>"):
        page = PRODUCT.replace("{story}", STORY).replace(
            "A light trail shoe with a grippy sole for wet rock and mud, and a cushioned midsole.", written)
        text = extract(page, "https://shoes.test/x2").text
        assert "A light trail shoe with a grippy sole for wet rock." in text
        assert "%20" not in text and "<strong>" not in text


def test_a_products_text_written_twice_for_two_screen_sizes_comes_once():
    twice = f'<div class="mobile-only">{STORY}</div><div class="desktop-only">{STORY}</div>'
    text = extract(PRODUCT.replace("{story}", twice), "https://shoes.test/x2").text
    assert text.count("STORY_TEXT") == 1
    short = f'<p>Sizes 40 to 46</p><div class="x">{STORY}</div><p>Sizes 40 to 46</p>'
    assert extract(PRODUCT.replace("{story}", short), "https://shoes.test/x2").text.count("Sizes 40 to 46") == 2


def test_one_offer_block_without_declarations_names_a_product():
    page = (PRODUCT.replace("{story}", STORY).replace('"@type": "Product"', '"@type": "Thing"'))
    assert extract(page, "https://shoes.test/x2").type == "product"


def test_an_offer_page_whose_extractors_disagree_keeps_their_text_not_the_whole_shop(monkeypatch):
    from webtools.plugins.web_fetch import extract as pipeline

    # The extractors disagree and keep little (``_not_an_article``): on an offer page their text stays.
    monkeypatch.setattr(pipeline, "_not_an_article", lambda *args, **kwargs: True)
    shop = ('<div class="shop-links"><a href="/boots">SHOP_LINK Boots</a> <a href="/socks">SHOP_LINK Socks</a> '
            '<a href="/sale">SHOP_LINK Sale</a></div><footer>')
    page = PRODUCT.replace("{story}", STORY).replace('"@type": "Product"', '"@type": "Thing"').replace("<footer>", shop)
    result = extract(page, "https://shoes.test/x2")
    assert result.type == "product"
    assert "STORY_TEXT" in result.text
    assert "SHOP_LINK" not in result.text


def test_an_offer_blocks_button_named_for_screen_readers_names_a_product():
    # An icon for a button: its name is in aria-label alone.
    page = (PRODUCT.replace("{story}", STORY).replace('"@type": "Product"', '"@type": "Thing"')
            .replace("<button>Add to cart</button>", '<button aria-label="Add to cart"><svg></svg></button>'))
    assert extract(page, "https://shoes.test/x2").type == "product"


def test_a_documentation_generators_page_is_documentation():
    page = """<html><head><title>Install - Tool docs</title><meta name="generator" content="Sphinx 7.2"></head>
<body><div class="rst-content"><h1>Install</h1><p>Install the tool with pip into a fresh virtual environment
before you run its first command on your project.</p><pre><code class="language-bash">pip install tool</code></pre>
</div></body></html>"""
    result = extract(page, "https://docs.test/install")
    assert result.type == "documentation"
    assert "pip install tool" in result.text


def test_a_run_of_headed_sections_is_a_service_page():
    sections = "".join(f"<section><h2>Service {n}</h2><p>We repair bikes of every kind, SECTION_{n} with parts in "
                       "stock and a free check of brakes and gears.</p></section>" for n in range(1, 5))
    page = f"<html><head><title>Bike repair</title></head><body><h1>Bike repair</h1>{sections}</body></html>"
    result = extract(page, "https://bikes.test/repair")
    assert result.type == "service"
    assert all(f"SECTION_{n}" in result.text for n in range(1, 5))


_PANEL = ("We service boilers of every make, {mark}, and leave a written report of what we checked and what the "
          "engineer would replace next.")
DISCLOSED = f"""<html><head><title>Heating care</title></head><body><h1>Heating care</h1>
<p>Three plans for the heating of a family home, chosen by the tab below, with the questions we are asked most.</p>
<div role="tablist"><button role="tab" aria-controls="p1">Basic</button><button role="tab">Plus</button>
<a href="#" data-bs-target="#p3">Total</a></div>
<div id="p1" class="panel">{_PANEL.format(mark="TAB_ONE")}</div>
<div role="tabpanel" hidden>{_PANEL.format(mark="TAB_TWO")}</div>
<div id="p3" class="collapse hidden">{_PANEL.format(mark="TAB_THREE")}</div>
<h2>Questions</h2><button aria-expanded="false" aria-controls="a1">How often?</button>
<div id="a1" aria-hidden="true"><p>Once a year, before winter, ANSWER_ONE as the maker of the boiler asks.</p></div>
<h3 id="q2">Who comes?</h3><div role="region" aria-labelledby="q2" style="display:none">
<p>One of our own engineers, ANSWER_TWO never a subcontractor.</p></div>
<div class="mobile-copy hidden"><p>MOBILE_COPY Three plans for the heating of a family home.</p></div>
<div role="dialog" aria-hidden="true"><p>DIALOG_TEXT Sign up to our newsletter for offers.</p></div>
</body></html>"""


def test_what_a_tab_or_an_accordion_discloses_is_kept_and_other_hidden_text_is_not():
    text = extract(DISCLOSED, "https://heating.test/care").text
    for mark in ("TAB_ONE", "TAB_TWO", "TAB_THREE", "ANSWER_ONE", "ANSWER_TWO"):
        assert mark in text
    assert "MOBILE_COPY" not in text and "DIALOG_TEXT" not in text


def _accordion_item(n: int, question: str) -> str:
    return (f'<h3 class="accordion-header"><button aria-expanded="false" aria-controls="answer{n}">'
            f'<span>{question}</span><svg><path d="M0 0"/></svg></button></h3>'
            f'<div id="answer{n}" role="region" hidden><p>ANSWER_{n} Our engineers answer this at the first visit, '
            f'and the plan you chose says what it costs and when it is done.</p></div>')


ACCORDION = f"""<html><head><title>Boiler service questions</title></head><body>
<nav><a href="/">Home</a> <a href="/plans">Plans</a></nav>
<main><h1>Boiler service questions</h1>
<p>The questions our customers ask most about a yearly boiler service, each answered below by our own team.</p>
{_accordion_item(1, "QUESTION_ONE How long does a service take?")}
{_accordion_item(2, "QUESTION_TWO Do I need to be at home?")}
{_accordion_item(3, "QUESTION_THREE What if a part is worn?")}
<button class="subscribe">SUBSCRIBE_BUTTON</button></main>
<footer>FOOTER_TEXT Heating Ltd</footer></body></html>"""


def test_an_accordions_question_its_heading_holds_in_a_button_is_kept_with_its_answer():
    # WAI-ARIA's accordion wraps each panel's button in a heading: the button's words are the heading's.
    text = extract(ACCORDION, "https://heating.test/questions").text
    for n, mark in enumerate(("QUESTION_ONE", "QUESTION_TWO", "QUESTION_THREE"), 1):
        assert mark in text and f"ANSWER_{n}" in text
        assert text.index(mark) < text.index(f"ANSWER_{n}")
    assert "SUBSCRIBE_BUTTON" not in text and "FOOTER_TEXT" not in text


def _read_by_trafilatura(monkeypatch, page: str, url: str) -> list:
    """The pages trafilatura was given while ``page`` was extracted, parsed."""
    import lxml.html

    from webtools.plugins.web_fetch import extract as pipeline

    read, real = [], pipeline.trafilatura_article

    def reading(doc, base, fast=True):
        read.append(lxml.html.fromstring(lxml.html.tostring(doc)))
        return real(doc, base, fast)
    monkeypatch.setattr(pipeline, "trafilatura_article", reading)
    extract(page, url)
    return read


def test_trafilatura_reads_what_a_tab_or_an_accordion_discloses_shown_and_a_repeated_panel_once(monkeypatch):
    # trafilatura removes hidden elements itself: what a click shows must reach it shown.
    repeated = f'<div role="tabpanel" style="display:none">{_PANEL.format(mark="TAB_TWO")}</div>'
    page = DISCLOSED.replace("<h2>Questions</h2>", repeated + "<h2>Questions</h2>")
    doc = _read_by_trafilatura(monkeypatch, page, "https://heating.test/care")[0]
    first, again = doc.xpath("//*[@role='tabpanel']")
    assert first.get("hidden") is None and "TAB_TWO" in first.text_content()
    assert "display:none" in again.get("style")  # the same words again: left hidden
    assert doc.get_element_by_id("a1").get("aria-hidden") is None
    assert "display" not in doc.xpath("//*[@role='region']")[0].get("style")
    # A product's page keeps its hidden elements (its tabs); what they disclose is shown too.
    care = ('<div id="care" role="tabpanel" style="display: none"><p>TAB_TEXT Wash the X2 by hand in cold water.</p>'
            "</div>")
    doc = _read_by_trafilatura(monkeypatch, PRODUCT.replace("{story}", STORY + care), "https://shoes.test/x2")[0]
    assert "display" not in doc.get_element_by_id("care").get("style")


def _offer_section(n: int, extra: str = "") -> str:
    return (f"<section><h2>Offer {n}</h2><p>KEPT_{n} Weekly cleaning of offices up to {n}00 square metres, "
            f"desks and floors included.</p><ul><li>MISSED_{n} windows</li><li>kitchens</li><li>stairs</li></ul>"
            f"<p>MISSED_TOO_{n} Keys kept in our safe, staff vetted and insured for every visit.</p>{extra}</section>")


SECTIONS = f"""<html><head><title>Office cleaning</title></head><body><nav>Home Services Contact</nav>
<main><h1>Office cleaning</h1>{"".join(_offer_section(n) for n in range(1, 5))}</main>
<aside><p>OUTSIDE_SECTIONS Call us today.</p></aside></body></html>"""


_KEPT_PART = "\n\n".join(
    f"KEPT_{n} Weekly cleaning of offices up to {n}00 square metres, desks and floors included." for n in range(1, 5))


def _sections_body(page: str):
    from webtools.plugins.web_fetch.extract.page import clean, parse

    doc = parse(page)
    clean(doc)
    return doc


def test_a_service_text_that_kept_a_part_of_each_section_becomes_every_section():
    from webtools.plugins.web_fetch.extract import _every_section

    options = {"include_image_urls": False, "title": "Office cleaning", "page_url": "https://clean.test/"}
    part = _KEPT_PART
    every = _every_section(_sections_body(SECTIONS), part, "https://clean.test/", options)
    assert every is not None
    assert all(f"MISSED_{n}" in every and f"MISSED_TOO_{n}" in every for n in range(1, 5))
    assert "OUTSIDE_SECTIONS" not in every and "Home Services" not in every
    # A text with most of the sections' words already is kept as it is.
    whole = _sections_body(SECTIONS).find("body/main").text_content()
    assert _every_section(_sections_body(SECTIONS), whole, "https://clean.test/", options) is None


def test_a_section_the_extractors_left_out_whole_keeps_the_text():
    from webtools.plugins.web_fetch.extract import _every_section

    related = "<section><h2>Related</h2><p>" + " ".join(f"RELATED_{n} product" for n in range(30)) + "</p></section>"
    page = SECTIONS.replace("</main>", f"{related}</main>")
    options = {"include_image_urls": False, "title": "Office cleaning", "page_url": "https://clean.test/"}
    part = _KEPT_PART
    assert _every_section(_sections_body(page), part, "https://clean.test/", options) is None


_WORD = st.from_regex(r"[A-Za-z]{1,12}", fullmatch=True)
_TEXT = st.lists(_WORD, min_size=1, max_size=30).map(" ".join)
_TAGS = st.sampled_from(["div", "p", "section", "article", "li", "span", "h2", "td", "a", "pre", "nav", "form"])
_CLASSES = st.sampled_from(["", "post", "postbody", "cooked", "card", "price", "content", "message-body",
                            "username", "date", "hidden"])
_ITEMS = st.sampled_from(["", ' itemscope itemtype="https://schema.org/Comment"', ' itemprop="text"',
                          ' itemprop="author"', ' itemprop="datePublished" datetime="2025-01-01"'])


@st.composite
def _pages(draw, depth: int = 0) -> str:
    children = []
    for _ in range(draw(st.integers(0, 4 if depth < 3 else 0))):
        children.append(draw(_pages(depth + 1)))
    tag, cls, item = draw(_TAGS), draw(_CLASSES), draw(_ITEMS)
    href = ' href="/x"' if tag == "a" else ""
    return f'<{tag} class="{cls}"{item}{href}>{draw(_TEXT)}{"".join(children)}</{tag}>'


_DECLARED = st.sampled_from(["", '{"@type": "Product"}', '{"@type": "QAPage"}', '{"@type": "ItemList"}',
                             '{"@type": "Article"}'])


@given(_pages(), _DECLARED)
@settings(max_examples=150, deadline=None)
def test_extraction_never_raises_and_a_page_with_text_never_comes_back_empty(body, declared):
    script = f'<script type="application/ld+json">{declared}</script>' if declared else ""
    page = f"<html><head><title>T</title>{script}</head><body>{body}</body></html>"
    result = extract(page, "https://any.test/page")
    assert result.type in TYPES
    assert re.search(r"\w", result.text)


def test_an_invision_thread_is_read_by_its_comment_content():
    posts = "".join(f"""<article class="cPost ipsBox"><aside class="cAuthorPane"><h3 class="cAuthorPane_author">
<a href="/profile/{n}">member{n}</a></h3></aside><div class="ipsColumn"><div class="ipsComment_meta">
<time datetime="2025-10-2{n}T10:00:00Z">October 2{n}</time></div>
<div data-role="commentContent" class="ipsType_richText"><p>The payment module keeps its own table, POST_{n}, so
change the order there before you switch the method.</p></div></div></article>""" for n in range(1, 4))
    page = f"<html><head><title>Change a payment</title></head><body><h1>Change a payment</h1>{posts}</body></html>"
    result = extract(page, "https://shop-forum.test/topic/1")
    assert result.type == "forum"
    for n in range(1, 4):
        post = f"**member{n}** · 2025-10-2{n}T10:00:00+00:00\n\nThe payment module keeps its own table, POST_{n}"
        assert post in result.text


def _cleaned_body(page: str):
    from webtools.plugins.web_fetch.extract.page import clean, parse

    doc = parse(page)
    clean(doc)
    return doc.find("body")


_TILES = "".join(f"""<div class="tile"><h3>Plan {n}</h3><div>Weekly lawn mowing and edging for gardens up to {n}00
square metres, PLAN_{n}, with the clippings taken away and the edges trimmed by hand.</div></div>"""
                 for n in range(1, 9))
SERVICE_TILES = f"""<html><head><title>Garden care plans</title></head><body><h1>Garden care plans</h1>
<div class="intro"><p>INTRO_TEXT We look after lawns and hedges across the county, all year round.</p></div>
<div class="grid">{_TILES}</div></body></html>"""


def test_a_thin_text_of_a_page_of_prose_is_replaced_by_trafilaturas_full_reading():
    from webtools.plugins.web_fetch.extract import fuller_reading

    options = {"include_image_urls": False, "title": "Garden care plans", "page_url": "https://garden.test/"}
    thin = "INTRO_TEXT We look after lawns and hedges across the county, all year round."
    fuller = fuller_reading(SERVICE_TILES, "https://garden.test/", options, thin, _cleaned_body(SERVICE_TILES))
    assert fuller is not None
    assert all(f"PLAN_{n}" in fuller for n in range(1, 9))
    # A text that holds most of the page is kept: nothing is read again.
    whole = _cleaned_body(SERVICE_TILES).text_content()
    assert fuller_reading(SERVICE_TILES, "https://garden.test/", options, whole, _cleaned_body(SERVICE_TILES)) is None


def test_a_thin_text_of_a_page_of_links_is_kept():
    from webtools.plugins.web_fetch.extract import fuller_reading

    links = "".join(f'<li><a href="/story/{n}">Council votes on the new bus lanes in the town centre {n}</a></li>'
                    for n in range(30))
    page = f"<html><head><title>News</title></head><body><ul>{links}</ul><p>A short note.</p></body></html>"
    options = {"include_image_urls": False, "title": "News", "page_url": "https://news.test/"}
    assert fuller_reading(page, "https://news.test/", options, "A short note.", _cleaned_body(page)) is None


def test_a_listing_declared_an_article_still_gives_every_card():
    declared = LISTING.replace("</title>", '</title><script type="application/ld+json">{"@context": '
                                           '"https://schema.org", "@type": "Article", "headline": "All courses"}'
                                           '</script>')
    result = extract(declared, "https://learn.test/courses")
    assert result.type == "listing"
    assert all(f"CARD_{n}" in result.text for n in range(1, 13))


def test_cards_of_ten_times_a_text_that_lies_outside_them_are_the_content():
    from webtools.plugins.web_fetch.extract.listing import CARDS_DOMINATE, Cards, cards_win

    text = "enrolment for the spring term closes on the first of march".split()
    cards = Cards(parent=None, items=[], words=0)
    many = ["course", "data", "analysis", "with", "spreadsheets"] * (2 * len(text))
    assert len(many) >= CARDS_DOMINATE * len(text)
    assert cards_win(cards, many, text, lambda card: [])
    # Fewer, and the text not in them: the text is the page's, not a part of the list.
    assert not cards_win(cards, many[:3 * len(text)], text, lambda card: [])


def test_an_article_in_one_of_a_pages_boxes_of_one_kind_is_not_a_listing():
    # The page is laid out in boxes of one class: the menu, the article, a login box, two small ones. Each
    # has a link and words, as cards do, but one of them holds the whole article.
    story = "".join(f"<p>The council met on Tuesday to vote on the new bus lanes PARAGRAPH_{n}, and the "
                    f"traders of the high street spoke against them for an hour before the vote.</p>" for n in range(8))
    boxes = [
        '<div class="box"><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a> MENU_BOX '
        'weather and traffic</div>',
        f'<div class="box"><h1>Bus lanes approved</h1><p>By <a href="/staff/jo">Jo Reed</a></p>{story}</div>',
        '<div class="box"><a href="/login">Log in</a> with your reader account LOGIN_BOX to comment</div>',
        '<div class="box"><a href="/tips">Send us a tip</a> about news in your town TIP_BOX</div>',
        '<div class="box"><a href="/jobs">Jobs</a> at the paper in print and online JOBS_BOX</div>',
    ]
    page = f"<html><head><title>Bus lanes approved</title></head><body>{''.join(boxes)}</body></html>"
    result = extract(page, "https://paper.test/news/bus-lanes")
    assert result.type == "article"
    assert all(f"PARAGRAPH_{n}" in result.text for n in range(8))
    assert "MENU_BOX" not in result.text and "LOGIN_BOX" not in result.text


_STEPS = "".join(f"<section><h2>Step {n}: STEP_{n}</h2><p>We pack, carry and load room {n} for you, "
                 f"with our own boxes.</p></section>" for n in range(1, 9))
_STORY = ("<div class='card'><p>Read how a family of five moved from a flat in town to a farm, with two dogs, a piano "
          "and a greenhouse, in one day and without a single broken pot, in our customer STORY.</p></div>")
_CITIES = "".join(f'<li><a href="/city/{n}">Movers in city {n} RELATED_LINK</a></li>' for n in range(20))
MOVERS = f"""<html><head><title>Moving services - Acme Movers</title></head><body>
<main><h1>Moving services</h1>{_STEPS}<section><h2>Stories</h2>{_STORY}</section></main>
<div class="related"><ul>{_CITIES}</ul></div></body></html>"""


def test_when_readability_finds_one_block_of_many_trafilaturas_text_is_the_content(monkeypatch):
    import lxml.html

    from webtools.plugins.web_fetch import extract as pipeline

    # readability-lxml keeps a small page whole; on a large one it picks the densest block, one of many.
    monkeypatch.setattr(pipeline, "readability_article",
                        lambda doc, url, base: lxml.html.fragment_fromstring(_STORY, create_parent="div"))
    text = extract(MOVERS, "https://movers.test/services").text
    assert all(f"STEP_{n}" in text for n in range(1, 9))
    assert "We pack, carry and load room 8" in text
    # Not the whole page, which the merge of the two (the story alone) would have called for.
    assert "RELATED_LINK" not in text


def test_a_products_rails_of_other_products_are_left_out_and_what_follows_them_kept():
    rail = "".join(f'<div class="card"><p>Merino trail sock {n}, RAIL_TEXT cushioned at the heel and toe for long '
                   f'days on rough ground.</p><p>€{n}9.00</p></div>' for n in range(1, 4))
    after = (f"<section><h2>Customers also bought</h2>{rail}</section><section><h2>Care</h2><p>Wash the X2 by "
             "hand in cold water CARE_TEXT and let it dry away from a fire or a radiator, stuffed with newspaper so "
             "that it keeps its shape.</p></section><footer>")
    # Declaring nothing, named a product by its offer block ("Add to cart").
    page = PRODUCT.replace("{story}", STORY).replace("<footer>", after)
    page = page.replace('"@type": "Product"', '"@type": "Thing"')
    result = extract(page, "https://shoes.test/x2")
    assert result.type == "product"
    assert "STORY_TEXT" in result.text and "CARE_TEXT" in result.text
    assert "RAIL_TEXT" not in result.text and "Customers also bought" not in result.text


def test_a_products_run_of_priced_link_cards_is_other_products_and_left_out():
    # Other sellers' offers in a carousel whose heading the extractor does not keep: each card a link to another
    # item, its title and its price; the product's own name, price and story stay, and so does a short block the
    # cards share with it.
    cards = "".join(f'<li class="slide"><a href="/itm/{n}"><img src="/i/{n}.jpg" alt=""></a><h3>Merino trail sock {n} '
                    f'OTHER_ITEM cushioned at the heel and toe for rough ground</h3><span>Peakfoot</span>'
                    f'<span>€{n}9.00</span></li>' for n in range(1, 6))
    carousel = f'<div aria-roledescription="carousel"><ul class="carousel__list">{cards}</ul></div>'
    page = PRODUCT.replace("{story}", STORY + "<p>Peakfoot</p>").replace("<footer>", carousel + "<footer>")
    text = extract(page, "https://shoes.test/x2").text
    assert "STORY_TEXT" in text and text.startswith("# Trail shoe X2\n\n")
    assert "OTHER_ITEM" not in text


def test_without_other_products_keeps_a_run_of_short_blocks_and_headings():
    from webtools.plugins.web_fetch.extract.choice import words
    from webtools.plugins.web_fetch.extract.product import without_other_products

    other = words("Merino trail sock 1 cushioned at the heel and toe for rough ground Peakfoot €19.00")
    story = ("A light trail shoe for wet rock, with a grippy sole and a cushioned midsole for long days in the hills. "
             "Its upper dries fast after a river crossing, and its toe cap takes the knocks of rocky descents.")
    text = f"# Peakfoot\n\n{story}\n\nMerino trail sock 1 cushioned at the heel and toe for rough ground\n\n€19.00"
    assert without_other_products(text, other) == f"# Peakfoot\n\n{story}"
    short = f"# Peakfoot\n\n{story}\n\nPeakfoot\n\n€19.00"
    assert without_other_products(short, other) == short  # a run of short blocks: the product's own, maybe
    assert without_other_products(text, words("Some other words")) == text
    # A block longer than a card is a list of them: a shop's category read as one product's page.
    cards = " ".join(f"- Merino trail sock {n} cushioned at the heel and toe for rough ground €19.00" for n in range(8))
    listed = f"# Peakfoot\n\n{story}\n\n{cards}"
    assert without_other_products(listed, words(cards)) == listed


def test_without_rails_drops_a_rails_section_up_to_the_next_heading_of_its_level():
    from webtools.plugins.web_fetch.extract.product import without_rails

    text = ("# Shoe\n\nA light shoe.\n\n## You may also like\n\n- [Sock](/s) · €9\n\n### More socks\n\n"
            "- [Sock 2](/s2)\n\n## Sizes\n\nFrom 38 to 47.\n\n### Similar items\n\nSock 3")
    assert without_rails(text) == "# Shoe\n\nA light shoe.\n\n## Sizes\n\nFrom 38 to 47."
    assert without_rails("## Related reading\n\nAn essay.") == "## Related reading\n\nAn essay."


def test_without_rails_drops_a_products_reviews_recommendations_and_shipping_sections():
    from webtools.plugins.web_fetch.extract.product import without_rails

    for heading in ("Reviews for this item (76)", "Customer reviews", "Top reviews from the United States",
                    "Recommended for you", "Products related to this item", "Added to your cart! Complete the set?",
                    "Shipping & Returns", "Delivery and returns"):
        text = f"# Mug\n\nA stoneware mug.\n\n## {heading}\n\nAsides.\n\n## Care\n\nDishwasher safe."
        assert without_rails(text) == "# Mug\n\nA stoneware mug.\n\n## Care\n\nDishwasher safe.", heading
    # Not a product's own reviews by an editor, nor its returns policy named otherwise.
    kept = "# Mug\n\n## Editorial Reviews\n\nA fine mug.\n\n## Returns policy\n\n30 days."
    assert without_rails(kept) == kept


def test_a_row_of_tildes_in_a_products_text_does_not_hold_its_reviews_in_one_block():
    # A seller's note underlined with tildes ("~~~~~~~~"): written as it stands, Markdown reads it as a code fence
    # never closed, and the rest of the text was one block, whose reviews' heading was no longer a heading.
    reviews = "".join(f'<div class="card"><p>A lovely shoe number {n}, REVIEW_TEXT well packed and quick to arrive '
                      'at our house.</p></div>' for n in range(3))
    after = ("<section><p>Each shoe is stitched by hand in our workshop.<br>~~~~~~~~~~~~~<br>Made in Portugal from "
             f"recycled yarn.</p></section><section><h2>Reviews for this item (3)</h2>{reviews}</section><section>"
             "<h2>Care</h2><p>Wash the X2 by hand in cold water CARE_TEXT and let it dry away from a fire.</p>"
             "</section><footer>")
    page = PRODUCT.replace("{story}", STORY).replace("<footer>", after)
    result = extract(page.replace('"@type": "Product"', '"@type": "Thing"'), "https://shoes.test/x2")
    assert result.type == "product"
    assert "Made in Portugal" in result.text and "CARE_TEXT" in result.text
    assert "REVIEW_TEXT" not in result.text


def test_text_that_opens_like_a_code_fence_is_escaped_and_code_holding_a_fence_is_fenced_longer():
    from webtools.plugins.web_fetch.extract.choice import blocks
    from webtools.plugins.web_fetch.extract.markdown import to_markdown

    markdown = to_markdown("<p>Intro.</p><p>~~~ wavy line of a signature</p><ul><li>```not code</li></ul>"
                           "<pre>```py\nx = 1\n\n```</pre><p>After.</p>")
    assert markdown == ("Intro.\n\n\\~~~ wavy line of a signature\n\n- \\```not code\n\n"
                        "````\n```py\nx = 1\n\n```\n````\n\nAfter.")
    # Read back into blocks, the code is one block, its inner fence and blank line within it.
    assert [b.markdown for b in blocks(markdown)] == [
        "Intro.", "\\~~~ wavy line of a signature", "- \\```not code", "````\n```py\nx = 1\n\n```\n````", "After."]


def test_on_an_offer_page_a_shorter_readability_text_gives_way_to_trafilaturas():
    from webtools.plugins.web_fetch.extract import _readability_missed

    article = "A light trail shoe for wet rock and mud, with a cushioned midsole and a grippy sole."
    traf = article + "\n\n- Drop: 6 mm\n- Weight: 290 g"
    assert _readability_missed(article, traf, offer=True)
    assert not _readability_missed(article, traf)  # elsewhere only a small part of a long text is
    assert not _readability_missed(traf, article, offer=True)


def test_a_service_page_without_an_article_is_its_sections_without_the_boxes_around_them(monkeypatch):
    from webtools.plugins.web_fetch import extract as pipeline

    # The extractors disagree and keep little: the page has no article (``_not_an_article``).
    monkeypatch.setattr(pipeline, "_not_an_article", lambda *args, **kwargs: True)
    page = SECTIONS.replace("<main>", "<div class='consent'><p>COOKIE_TEXT We use cookies to improve your visit, "
                                      "accept them all or choose which.</p></div><main>")
    result = extract(page, "https://clean.test/offices")
    assert result.type == "service"
    assert all(f"MISSED_{n}" in result.text for n in range(1, 5))
    assert "COOKIE_TEXT" not in result.text and "OUTSIDE_SECTIONS" not in result.text


#: A product page's own paragraph besides its story: what the page says, which its asides must not take away.
CARE = ("<p>Wash the X2 by hand in cold water and let it dry away from a fire or a radiator, stuffed with "
        "newspaper so that it keeps its shape, and brush the mud off its sole once it is dry.</p>")


def _product_with(end: str) -> str:
    """The product page with its story and its care paragraph, and ``end`` (which ends with the page's
    ``<footer>``) in place of its footer's opening tag."""
    return PRODUCT.replace("{story}", STORY + CARE).replace("<footer>", end)


def test_a_products_customer_reviews_are_left_out_and_its_description_kept():
    reviews = "".join(
        f'<div class="customer-review"><p>Reviewer {n}, verified buyer</p><p>REVIEW_TEXT Comfortable from the first '
        f"walk, though the laces came loose on the descent and I had to stop {n} times to tie them.</p></div>"
        for n in range(1, 6))
    after = f'<div class="product-reviews__list"><h2>What buyers say</h2>{reviews}</div><footer>'
    page = PRODUCT.replace("{story}", STORY).replace("<footer>", after)
    result = extract(page, "https://shoes.test/x2")
    assert result.type == "product"
    assert "STORY_TEXT" in result.text
    assert "REVIEW_TEXT" not in result.text and "verified buyer" not in result.text
    # One review alone is the page's own (a magazine's review of the product), not its customers'.
    own = PRODUCT.replace("{story}", f'<div class="item car-review">{STORY}</div>{CARE}')
    assert "STORY_TEXT" in extract(own, "https://shoes.test/x2").text


def test_customer_reviews_are_left_out_of_a_page_that_declares_products_in_microdata_and_reads_as_an_article():
    # A game store's page: the game and its add-on, each a microdata Product, no offer block, read as an article.
    game = ("<p>Run the ridges of twelve mountain ranges against the clock, GAME_TEXT in storms that change the trail "
            "under your feet, and race friends online or your own ghost from yesterday.</p>")
    reviews = "".join(
        f'<div class="review_box"><p>Player {n}, 40 hours played</p><p>REVIEW_TEXT Great maps and fair matchmaking, '
        f"though the servers lag on weekends and I lost {n} races to a disconnection.</p></div>" for n in range(1, 6))
    page = ('<html><head><title>Hill Runner | Game Store</title></head><body><nav><a href="/">Store</a></nav>'
            '<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Hill Runner</h1>' + game * 2
            + '</div><div itemscope itemtype="https://schema.org/Product"><h2>Hill Runner: Winter maps</h2><p>Four new '
            f'maps of snowy peaks.</p></div><div class="user_reviews"><h2>Customer reviews</h2>{reviews}</div>'
            "<footer>FOOTER_TEXT</footer></body></html>")
    result = extract(page, "https://games.test/hill-runner")
    assert result.type == "article"
    assert "GAME_TEXT" in result.text and "Winter maps" in result.text
    assert "REVIEW_TEXT" not in result.text


def test_a_products_dialogs_are_left_out_of_its_text():
    dialogs = ('<div class="drawer" role="dialog" aria-modal="true"><h2>Your privacy</h2><p>DIALOG_TEXT We and our '
               "partners use cookies to remember your basket, measure visits and show offers that suit you.</p></div>"
               '<dialog><h2>Sign in</h2><p>DIALOG_TEXT Sign in to track your orders, save your sizes and check out '
               "faster next time you visit the shop.</p></dialog><footer>")
    page = _product_with(dialogs)
    result = extract(page, "https://shoes.test/x2")
    assert "STORY_TEXT" in result.text
    assert "DIALOG_TEXT" not in result.text


def test_a_products_dialog_with_a_title_of_its_own_is_left_out_of_its_text():
    dialog = ('<div role="alertdialog" aria-modal="true"><h1>Your privacy settings</h1><p>DIALOG_TEXT We and our '
              "partners use cookies to remember your basket, measure visits and show offers that suit you.</p></div>"
              "<footer>")
    text = extract(_product_with(dialog), "https://shoes.test/x2").text
    assert "STORY_TEXT" in text and "Wash the X2" in text
    assert "DIALOG_TEXT" not in text


def test_a_products_dialog_holding_a_table_is_its_own_data_and_kept():
    guide = ('<div role="dialog" aria-modal="true"><h2>Size guide</h2><table><tr><th>Size</th><th>Foot length</th>'
             "</tr><tr><td>42</td><td>SIZE_GUIDE 26.5 cm</td></tr><tr><td>43</td><td>27.2 cm</td></tr></table></div>"
             "<footer>")
    text = extract(_product_with(guide), "https://shoes.test/x2").text
    assert "STORY_TEXT" in text and "SIZE_GUIDE" in text


def test_a_products_boxes_named_modal_are_its_dialogs_unless_they_hold_its_details():
    boxes = ('<div class="fixed inset-0" data-testid="notify-modal"><h3>Notify me when back in stock</h3><p>MODAL_TEXT '
             "Once these colours sell out they are gone for good: leave your address and we will tell you when new "
             'ones come.</p></div><div id="country-popup"><p>MODAL_TEXT Where are we shipping to? Buying from your '
             "own country's shop is the quickest way to get your shoes.</p></div>"
             '<div class="pdp-product-details-modal"><h2>Product details</h2><p>DETAILS_TEXT Upper of recycled mesh, '
             "lining of merino wool, a sole of natural rubber with four millimetre lugs.</p></div><footer>")
    text = extract(_product_with(boxes), "https://shoes.test/x2").text
    assert "STORY_TEXT" in text and "Wash the X2" in text
    assert "MODAL_TEXT" not in text
    assert "DETAILS_TEXT" in text


def test_a_products_fine_print_is_left_out_of_its_text():
    notes = ('<div class="page-disclaimer"><p>FINE_PRINT Grip measured by the maker on wet granite at 10 °C; results '
             "on other rock and in other weather may differ, as may the life of the sole.</p></div>"
             '<p id="financing-disclaimer">FINE_PRINT Financing is offered to qualified buyers, subject to credit '
             "approval, at rates from 0% to 36% APR over twelve months.</p><footer>")
    page = _product_with(notes)
    result = extract(page, "https://shoes.test/x2")
    assert "STORY_TEXT" in result.text and "Wash the X2" in result.text
    assert "FINE_PRINT" not in result.text


def test_a_products_text_that_is_only_reviews_is_kept():
    from webtools.plugins.web_fetch.extract.choice import words
    from webtools.plugins.web_fetch.extract.product import without_asides

    text = "Comfortable from the first walk, REVIEW_TEXT though the laces came loose on the descent."
    assert without_asides(text, words(text)) == text  # trafilatura kept nothing but the reviews
    longer = f"{STORY_WORDS}\n\n{text}"
    assert without_asides(longer, words(text)) == STORY_WORDS


STORY_WORDS = ("Built for long days in the hills, the X2 keeps its grip on wet granite and loose gravel. Its upper "
               "dries fast after a river crossing, and the toe cap takes the knocks of rocky descents.")


def _story(n: int) -> str:
    return (f'<article class="story"><h3><a href="/news/{n}">Compiler research, part {n}</a></h3>'
            f'<time datetime="2025-11-{30 - n:02d}T09:00:00Z">November {30 - n}, 2025</time><p>The new compiler '
            f"checks STORY_{n} programs for memory errors before they run, and found bugs in code tested for years."
            "</p></article>")


def test_a_listing_dated_by_its_first_cards_time_is_still_its_cards(monkeypatch):
    from webtools.plugins.web_fetch import extract as pipeline

    # The extractors kept the first card alone, right after the headline; the page's only date is that
    # card's <time>: it dates the card, not the page, and the cards are the page's content.
    monkeypatch.setattr(pipeline, "_readability_missed", lambda *args, **kwargs: False)
    monkeypatch.setattr(pipeline, "merge", lambda *args, **kwargs: (
        "### [Compiler research, part 1](https://news.test/news/1)\n\nNovember 29, 2025\n\nThe new compiler checks "
        "STORY_1 programs for memory errors before they run, and found bugs in code tested for years."))
    page = ("<html><head><title>Software | Campus News</title></head><body><main><h1>Software</h1><div class='river'>"
            + "".join(_story(n) for n in range(1, 13)) + "</div></main></body></html>")
    result = extract(page, "https://news.test/topic/software")
    assert result.published == "2025-11-29T09:00:00+00:00"
    assert result.type == "listing"
    assert all(f"STORY_{n}" in result.text for n in range(1, 13))


def test_a_page_whose_cleaning_leaves_nothing_gets_trafilaturas_fuller_reading(monkeypatch):
    import lxml.html

    from webtools.plugins.web_fetch import extract as pipeline

    # A rental site's whole page inside its <header><nav> (unclosed): cleaning removes the chrome, and all
    # with it. trafilatura's fast reading kept the first block; its full reading (its fallbacks) every one.
    rentals = "".join(f"<li><a href='/r/{n}'>Rowing machine RENTAL_{n}</a> delivered and set up, from $4{n} a day"
                      "</li>" for n in range(1, 9))
    page = (f"<html><head><title>Fitness rentals</title></head><body><header><nav><h1>Fitness equipment rentals</h1>"
            f"<ul>{rentals}</ul></nav></header></body></html>")

    def reading(doc, base, fast=True):
        items = doc.xpath("//li")
        return lxml.html.fragment_fromstring(
            "".join(lxml.html.tostring(li, encoding="unicode") for li in items[:1 if fast else None]),
            create_parent="ul")
    monkeypatch.setattr(pipeline, "trafilatura_article", reading)
    text = extract(page, "https://rent.test/fitness").text
    assert all(f"RENTAL_{n}" in text for n in range(1, 9))


def _feed_story(n: int) -> str:
    """A feed's story: every word of it is a link (its title, its writer, its comments, its tags)."""
    return f"""<div class="story"><h2><a href="/posts/{n}">How we moved our build to one repository STORY_{n}
without downtime</a></h2><div class="meta"><a href="/u/writer{n}">Writer {n}</a>
<a href="/posts/{n}#comments">{n} comments</a></div>
<div class="tags"><a href="/t/devops">#devops</a> <a href="/t/git">#git</a></div></div>"""


FEED = f"""<html><head><title>Latest posts - Dev Community</title></head><body>
<header><a href="/">Home</a> <a href="/login">Log in</a></header>
<main><div class="featured"><h2><a href="/posts/0">Our next education track opens</a></h2>
<p>Sign up for four weeks of lessons on building agents that plan, call tools and check their own work, with a
mentor who reviews your project every week and a certificate at the end.</p></div>
<div class="feed">{"".join(_feed_story(n) for n in range(1, 31))}</div></main>
<footer>FOOTER_TEXT about us</footer></body></html>"""


def test_a_feed_of_stories_whose_words_are_all_links_is_a_listing_of_them():
    # The extractors keep the featured story's teaser; the feed, all links, is the page's content.
    result = extract(FEED, "https://dev.test/")
    items = _listing_items(result)
    assert len(items) == 30
    assert all(f"STORY_{n}" in item and f"](https://dev.test/posts/{n})" in item for n, item in enumerate(items, 1))


def test_a_short_post_beside_a_blogroll_of_titled_links_stays_the_post():
    post = ("<p>We walked the coast path from the harbour to the lighthouse on Sunday POST_BODY, and the wind was so "
            "strong that the gulls hung still above the cliffs. The cafe at the top was closed for the winter, so "
            "we ate our sandwiches behind a wall and watched the ferry cross the bay twice before we turned back "
            "along the beach.</p>")
    # Ten times the post's words in titled links: a blogroll, not the page's list.
    roll = "".join(_feed_story(n) for n in range(1, 46))
    page = (f"<html><head><title>A windy walk</title></head><body><main><article><h1>A windy walk</h1>{post}"
            f'</article><aside><div class="roll">{roll}</div></aside></main></body></html>')
    result = extract(page, "https://walks.test/windy")
    assert result.type == "article"
    assert "POST_BODY" in result.text
    assert "STORY_" not in result.text


def test_a_definition_list_of_papers_pairs_each_term_with_its_description():
    # Each paper's number and links in its <dt>, its title and authors in the <dd> after it: one card each.
    papers = "".join(f"""<dt><a name="item{n}">[{n}]</a> <a href="/abs/24.{n:04}">paper:24.{n:04}</a>
[<a href="/pdf/24.{n:04}">pdf</a>]</dt>
<dd><div class="meta"><div class="list-title">Title: Sparse attention for long documents TITLE_{n}</div>
<div class="list-authors"><a href="/a/{n}">Ada Writer</a>, <a href="/a/{n + 1}">Bo Reader</a></div>
<div class="list-subjects">Subjects: Machine Learning</div></div></dd>""" for n in range(1, 21))
    page = f"""<html><head><title>Recent submissions | Papers</title></head><body>
<nav><a href="/">Home</a> <a href="/help">Help</a></nav>
<main><h1>Recent submissions</h1><p>Showing the newest papers in machine learning.</p>
<dl>{papers}</dl></main><footer>FOOTER_TEXT</footer></body></html>"""
    result = extract(page, "https://papers.test/list/recent")
    items = _listing_items(result)
    assert len(items) == 20
    for n, item in enumerate(items, 1):
        assert f"paper:24.{n:04}" in item and f"TITLE_{n}" in item


def test_cards_split_among_a_grids_rows_are_one_listing():
    # Three cards a row, four rows: no row holds enough cards to be a list, the rows together do.
    rows = "".join(f"""<div class="row">{"".join(f'''<div class="tile"><h3><a href="/recipes/{r * 3 + c}">Slow
cooked bean stew number {r * 3 + c}</a></h3><p>Forty minutes, serves four, TILE_{r * 3 + c}.</p></div>'''
                                          for c in range(3))}</div>""" for r in range(4))
    page = f"""<html><head><title>Recipes | Kitchen</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><h1>Recipes</h1><p>Our newest recipes.</p>{rows}</main><footer>FOOTER_TEXT</footer></body></html>"""
    result = extract(page, "https://kitchen.test/recipes")
    items = _listing_items(result)
    assert len(items) == 12 and all(f"TILE_{n}" in result.text for n in range(12))


def test_a_shops_grid_of_twice_its_descriptions_words_is_the_content():
    from webtools.plugins.web_fetch.extract.listing import MIN_SPLIT_CARDS, SHOP_OVER_TEXT, Cards, cards_win

    text = "our rain jackets keep you dry on long walks in the hills all year".split()
    # The grid shares a few of the text's words (its first line), not most of them.
    grid = text[:8] + ["packable", "shell", "jacket", "$89.00"] * 7
    assert SHOP_OVER_TEXT * len(text) <= len(grid)
    cards = Cards(parent=None, items=[None] * MIN_SPLIT_CARDS, words=0)
    assert cards_win(cards, grid, text, lambda card: [], shop=True)
    # Not a shop's cards: a text beside them, which they hold a part of, stays.
    assert not cards_win(cards, grid, text, lambda card: [])
    # Nor a few priced boxes beside an article (a review's picks): not a grid.
    assert not cards_win(Cards(parent=None, items=[None] * 4, words=0), grid, text, lambda card: [], shop=True)


def test_ten_cards_of_the_texts_words_that_share_none_of_them_are_the_content():
    from webtools.plugins.web_fetch.extract.listing import MIN_SPLIT_CARDS, Cards, cards_win

    # The extractors kept a sidebar's block (events, podcasts) and missed the list of stories beside it.
    text = "upcoming events save up to three hundred dollars with early bird rates podcasts video".split()
    stories = ["startup", "raises", "seed", "round", "for", "robots", "in", "farms"] * 2
    cards = Cards(parent=None, items=[None] * MIN_SPLIT_CARDS, words=0)
    assert cards_win(cards, stories, text, lambda card: [])
    # Fewer cards (a rail of picks beside an article), or cards that share a part of the text, or fewer words
    # than it: the text stays.
    assert not cards_win(Cards(parent=None, items=[None] * (MIN_SPLIT_CARDS - 1), words=0), stories, text,
                         lambda card: [])
    assert not cards_win(cards, stories[:-4] + text[:4], text, lambda card: [])
    assert not cards_win(cards, stories[:len(text) - 1], text, lambda card: [])
    # Nor when both extractors kept that text: an article, beside a rail of other stories.
    assert not cards_win(cards, stories, text, lambda card: [], agreed=1.0)


_INTRO = ("<p>Our studio plans, builds and looks after gardens for homes and offices across the county, INTRO_TEXT "
          "from the first sketch to the last plant.</p>")
_OFFERS = "".join(f'<div class="tile"><h3>Offer {n}</h3><p>OFFER_{n} done by our own crew.</p>'
                  f'<a href="/offer/{n}">Find out more</a></div>' for n in range(1, 9))
GARDENS = f"""<html><head><title>Garden design - Green Studio</title></head><body>
<div class="banner"><p>BANNER_TEXT Spring opening hours: nine to five every day of the week.</p></div>
<main><h1>Garden design</h1>{_INTRO}<div class="grid">{_OFFERS}</div></main></body></html>"""


def test_a_page_whose_text_kept_a_small_part_of_its_main_element_is_that_element(monkeypatch):
    import lxml.html

    from webtools.plugins.web_fetch import extract as pipeline

    # Both extractors keep the intro alone, the one paragraph of prose among the tiles of offers.
    def intro(*args, **kwargs):
        return lxml.html.fragment_fromstring(_INTRO, create_parent="div")
    monkeypatch.setattr(pipeline, "readability_article", intro)
    monkeypatch.setattr(pipeline, "trafilatura_article", intro)
    result = extract(GARDENS, "https://green.test/garden-design")
    assert result.type == "article"
    assert "INTRO_TEXT" in result.text and all(f"OFFER_{n}" in result.text for n in range(1, 9))
    assert "BANNER_TEXT" not in result.text
    # A text holding most of it (an article in its <main>, beside a box of links) stays as it is.
    from webtools.plugins.web_fetch.extract import _main_region

    body = lxml.html.fromstring(GARDENS).find("body")
    whole = " ".join(body.find(".//main").itertext())
    assert _main_region(body, whole, lambda: len(whole.split())) is None
    # A story whose headline lies outside <main> (its chapters alone inside), or one Open Graph calls an
    # article, is an article beside what else <main> holds.
    outside = lxml.html.fromstring(GARDENS.replace("<main><h1>Garden design</h1>", "<h1>Garden design</h1><main>"))
    assert _main_region(outside.find("body"), _INTRO, lambda: 60) is None
    assert _main_region(body, _INTRO, lambda: 60) is not None
    declared = GARDENS.replace("</title>", '</title><meta property="og:type" content="article">')
    assert "OFFER_1" not in extract(declared, "https://green.test/garden-design").text


def test_a_wordpress_shops_cards_naming_each_its_own_terms_are_one_kind():
    from webtools.plugins.web_fetch.extract.listing import find_cards

    # WordPress writes each post's id, categories, tags and stock into its classes: no two cards alike.
    kinds = ["tents", "stoves", "lamps", "bags", "chairs", "tables"]
    stock = ["instock", "outofstock"]
    cards = "".join(f'''<li class="product type-product post-{100 + n} status-publish {stock[n % 2]}
product_cat-{kind} product_tag-{kind}-sale has-post-thumbnail"><a href="/p/{kind}"><h2>Camping {kind}</h2></a>
<p>Light and strong camping {kind}, CARD_{n}.</p><span class="price">$49.00</span></li>'''
                    for n, kind in enumerate(kinds))
    page = lxml_html.fromstring(f"""<html><body><h1>Camping gear</h1><ul class="products">{cards}</ul>
<p>Our camping gear is tested on long trips.</p></body></html>""")
    found = find_cards(page.find("body"))
    assert found is not None and len(found.items) == len(kinds)
    # A class attribute that names no post keeps its classes: a menu's items per category stay apart.
    from webtools.plugins.web_fetch.extract.listing import _signature
    menu_item = lxml_html.fromstring('<li class="nav category-tents"></li>')
    assert _signature(menu_item, {})[1] == ("category-tents", "nav")


def test_a_boards_featured_items_whose_classes_add_to_its_cards_are_cards_too():
    from webtools.plugins.web_fetch.extract.listing import find_cards

    # A job board marks its featured jobs with more classes than the others: they are its cards all the same.
    jobs = "".join(f'''<li class="job{' feature' if n % 3 == 0 else ''}"><a href="/jobs/{n}">Backend engineer
number {n}</a><p>Remote, full time, JOB_{n}.</p></li>''' for n in range(9))
    page = lxml_html.fromstring(f"""<html><body><h1>Programming jobs</h1><ul class="jobs">{jobs}</ul>
<p>New jobs every day.</p></body></html>""")
    found = find_cards(page.find("body"))
    assert found is not None
    assert [card.xpath("string(.//p)") for card in found.items] == [f"Remote, full time, JOB_{n}." for n in range(9)]


def test_cards_all_links_that_the_text_holds_are_given_as_cards():
    from webtools.plugins.web_fetch.extract.listing import Cards, cards_win

    # A list of publications, each card's words all in its link, which the extractors kept with a heading.
    card_words = "annual report on the state of the rivers and lakes of the region".split() * 12
    text = ["publications", "of", "the", "agency"] + card_words
    linked = Cards(parent=None, items=[None] * 12, words=len(card_words), linked=True)
    assert cards_win(linked, card_words, text, lambda card: [])
    # Cards all links that the text does not hold are a rail beside it: the text stays.
    story = "we walked the coast path from the harbour to the lighthouse on a windy sunday".split() * 6
    assert not cards_win(linked, card_words, story, lambda card: [])


def _reddit_comment(n: int, author: str, replies: str = "") -> str:
    return f"""<div class="thing comment" id="thing_t1_{n}"><div class="entry">
<p class="tagline"><a href="/user/{author}" class="author">{author}</a> <span class="score">{n} points</span>
<time class="live-timestamp" datetime="2025-03-0{n}T10:00:00+00:00">{n} hours ago</time></p>
<form class="usertext" action="#"><input type="hidden" name="thing_id" value="t1_{n}">
<div class="usertext-body md-container"><div class="md"><p>The follicles grew in a dish, COMMENT_{n}, but the
trial in people is years away and the cost per graft is still far too high.</p></div></div></form>
<ul class="buttons"><li><a href="/r/x/comments/1/y/{n}/">permalink</a></li><li><a href="#">reply</a></li></ul>
</div><div class="child">{replies}</div></div>"""


def test_a_thread_whose_comments_are_in_forms_is_read_by_their_bodies_without_the_sidebars_box():
    # Old Reddit writes each comment's text in a form (for its editing) and its community's rules in the
    # sidebar in the same kind of box, with no author: the thread is its comments, each with its author.
    sidebar = """<div class="side"><div class="titlebox"><h1>science</h1><form class="usertext" action="#">
<div class="usertext-body md-container"><div class="md"><h1>Submission Rules</h1><ol><li>Link to published
research only SIDEBAR_RULE</li><li>No summaries of summaries</li></ol></div></div></form>
<p class="date">a community since 04 Mar 2008</p></div></div>"""
    comments = _reddit_comment(1, "ada", _reddit_comment(2, "grace")) + _reddit_comment(3, "linus")
    page = f"""<html><head><title>Follicles grown in a lab : science</title></head><body>
<div id="header"><a href="/r/popular/">popular</a> <a href="/r/all/">all</a></div>{sidebar}
<div class="content"><div class="thing link"><a class="title" href="https://news.test/follicles">Follicles grown in
a lab</a></div><div class="commentarea"><div class="sitetable nestedlisting">{comments}</div></div></div>
</body></html>"""
    result = extract(page, "https://old.reddit.test/r/science/comments/1/follicles/")
    assert result.type == "forum"
    for n, author in ((1, "ada"), (2, "grace"), (3, "linus")):
        assert f"**{author}** · 2025-03-0{n}T10:00:00+00:00\n\nThe follicles grew in a dish, COMMENT_{n}" in result.text
    assert result.text.index("COMMENT_1") < result.text.index("COMMENT_2") < result.text.index("COMMENT_3")
    assert "SIDEBAR_RULE" not in result.text


def _hn_comment(n: int, author: str, indent: int) -> str:
    return f"""<tr class="athing comtr" id="{n}"><td><table border="0"><tr><td class="ind" indent="{indent}">
<img src="s.gif" height="1" width="{40 * indent}"></td><td valign="top" class="votelinks"><center><a id="up_{n}"
href="vote?id={n}&amp;how=up"><div class="votearrow" title="upvote"></div></a></center></td><td class="default">
<div style="margin-top:2px; margin-bottom:-10px;"><span class="comhead"><a href="user?id={author}"
class="hnuser">{author}</a> <span class="age" title="2025-06-0{n}T10:00:00 174{n}"><a href="item?id={n}">{n} hours
ago</a></span> <span class="navs"> | <a href="#{n + 1}" class="clicky">next</a> <a class="togg clicky"
href="javascript:void(0)">[–]</a></span>
</span></div><br><div class="comment"><div class="commtext c00">Postgres handles this fine up to a few terabytes,
COMMENT_{n}, if you partition by month.<p>Vacuum is the part that needs care.</p></div><div class="reply"><p><font
size="1"><u><a href="reply?id={n}">reply</a></u></font></p></div></div></td></tr></table></td></tr>"""


def test_a_hacker_news_thread_is_its_question_and_every_comment_by_its_author():
    comments = "".join(_hn_comment(n, author, indent) for n, author, indent in
                       ((2, "ada", 0), (3, "grace", 1), (4, "linus", 0)))
    page = f"""<html><head><title>Ask HN: Is one Postgres enough? | Hacker News</title></head><body><center>
<table id="hnmain"><tr><td><span class="pagetop"><b class="hnname"><a href="news">Hacker News</a></b>
<a href="newest">new</a> | <a href="front">past</a> | <a href="newcomments">comments</a> | <a href="ask">ask</a></span>
</td></tr><tr><td><table class="fatitem"><tr class="athing submission" id="1"><td class="title"><span
class="titleline"><a href="item?id=1">Ask HN: Is one Postgres enough?</a></span></td></tr><tr><td class="subtext">
<span class="score">120 points</span> by <a href="user?id=asker" class="hnuser">asker</a> <span class="age"
title="2025-06-01T09:00:00 1748768400"><a href="item?id=1">5 hours ago</a></span> | <a href="item?id=1">48
comments</a></td></tr><tr><td colspan="2"></td><td><div class="toptext">We run one Postgres for everything,
QUESTION_TEXT, and it holds two terabytes. When did you have to split yours?</div></td></tr></table><br>
<table class="comment-tree">{comments}</table></td></tr><tr><td><span class="yclinks"><a href="newsguidelines.html">
Guidelines</a> | <a href="newsfaq.html">FAQ</a> | <a href="lists">Lists</a> | <a href="security.html">Security</a>
</span></td></tr></table></center></body></html>"""
    result = extract(page, "https://news.ycombinator.test/item?id=1")
    assert result.type == "forum"
    assert result.text.index("QUESTION_TEXT") < result.text.index("COMMENT_2") < result.text.index("COMMENT_3") \
        < result.text.index("COMMENT_4")
    assert "**asker**" in result.text
    for n, author in ((2, "ada"), (3, "grace"), (4, "linus")):
        assert f"**{author}**" in result.text.split(f"COMMENT_{n}")[0].rsplit("COMMENT_", 1)[-1]
    assert "Vacuum is the part that needs care" in result.text and "Guidelines" not in result.text


def test_a_texts_short_blocks_that_the_cards_hold_between_their_boxes_are_not_kept_before_them():
    from webtools.plugins.web_fetch.extract.choice import blocks, words
    from webtools.plugins.web_fetch.extract.listing import find_cards, listing_intro
    from webtools.plugins.web_fetch.extract.markdown import spaced_text

    # A shop's cards whose badge, price and delivery are boxes side by side: their text_content() runs them
    # together ("Members offer$12.50"), their Markdown does not, and the text's blocks of them were kept as the
    # list's intro.
    cards = "".join(f'''<div class="tile"><a href="/p/{n}">Folding camp stool model {n}</a><div class="badge">Members
offer</div><div class="price">${n}2.50</div><div class="ship">Ships in two days</div></div>''' for n in range(1, 7))
    page = lxml_html.fromstring(f"""<html><body><h1>Camp stools</h1><div class="grid">{cards}</div></body></html>""")
    found = find_cards(page.find("body"))
    assert found is not None and len(found.items) == 6
    first = found.items[0]
    assert "offer$12.50" in found.text(first) and "offer $12.50" in " ".join(spaced_text(first).split())
    text = blocks("# Camp stools\n\nMembers offer\n\n$12.50\n\nShips in two days\n\nMembers offer\n\n$22.50")
    card_words = words(" ".join(map(found.text, found.items)))
    spaced = words(" ".join(map(found.spaced, found.items)))
    assert listing_intro(text, card_words, spaced) == ["# Camp stools"]


def test_a_run_of_filter_labels_outside_a_listings_cards_is_not_its_intro():
    from webtools.plugins.web_fetch.extract.choice import blocks
    from webtools.plugins.web_fetch.extract.listing import listing_intro

    # A search page's filters ("Date", "Price", ...) are kept by the extractors beside its results: they are
    # not the listing's introduction, which its heading and a sentence are.
    text = blocks("# Walks near you\n\nGuided walks every weekend, all levels.\n\nDate\n\nDistance\n\nPrice\n\n"
                  "Sort by\n\nRIVER_WALK leaves at nine from the bridge")
    card_words = "river_walk leaves at nine from the bridge".split()
    assert listing_intro(text, card_words, []) == ["# Walks near you", "Guided walks every weekend, all levels."]
    # Fewer short blocks in a row are kept: a listing's one-line notes.
    text = blocks("# Walks near you\n\nFree\n\nNo booking\n\nRIVER_WALK leaves at nine from the bridge")
    assert listing_intro(text, card_words, []) == ["# Walks near you", "Free", "No booking"]


def test_a_link_cards_description_is_its_text_and_its_link_stays_on_its_heading():
    from webtools.plugins.web_fetch.extract.listing import open_link_cards

    box = lxml_html.fromstring("""<div><a class="tile" href="/audit"><h3>Audit <em>services</em></h3><p>What
our audits look at, and why.</p></a><a href="/tax"><h3>Tax</h3><span>Learn more</span></a><a href="/x">Plain
link</a></div>""")
    open_link_cards(box)
    card, label, plain = box
    assert card.tag == "div" and card.get("href") is None and card.get("class") is None
    link = card.find("h3/a")
    assert link.get("href") == "/audit" and link.text_content() == "Audit services"
    assert " ".join(card.find("p").text.split()) == "What our audits look at, and why."
    # A heading with a two-word label, and a link without a heading, are links still.
    assert label.tag == "a" and plain.tag == "a"


def test_a_service_pages_grid_of_link_cards_keeps_each_cards_description():
    # A consultancy's services, each a tile that is one link: its name as a heading and two lines on it. Read as
    # links, the tiles were left out, and the page's other teasers taken for its cards.
    services = {"Audit": "Our audits help clients understand their risks and improve the controls of reporting.",
                "Tax": "We advise on direct and indirect taxes for companies of every size, at home and abroad.",
                "Consulting": "Strategy, operations and technology advice that turns plans into results.",
                "Risk": "Find, weigh and manage the risks of your business before they become its problems.",
                "Deals": "Buy, sell, merge or split with advice on every step from the first look to the closing.",
                "Cyber": "Protect your systems and your customers' data with security that grows with you."}
    tiles = "".join(f"""<div class="promo-col"><a class="promo" href="/services/{name.lower()}"><div
class="promo__content">
<h3 class="promo__title">{name}</h3><div class="promo__desc">{name.upper()}_OFFER {text}</div>
<div class="promo__more"><span>Find out more</span></div></div></a></div>""" for name, text in services.items())
    stories = "".join(f"""<div class="story"><p>Story {n}: a retailer worked with us to rebuild its stores and its
supply of goods across three countries in one year.</p><a href="/stories/{n}">Read more</a></div>""" for n in range(4))
    page = f"""<html><head><title>Our services | Example Partners</title></head><body><header><nav><a href="/">Home</a>
<a href="/services">Services</a> <a href="/about">About</a></nav></header><main><div class="hero"><h1>Vast services.
Real results.</h1><p>At Example Partners we see every challenge as a chance to grow. Our people combine insight and
experience to solve your hardest problems, whatever your size and wherever you work.</p></div><div class="intro"><h2>
Explore our services</h2><p>Whether you are starting up or among the largest companies, tap into our range of services
to help your business thrive.</p></div><div class="promo-grid">{tiles}</div><div class="stories">{stories}</div></main>
<footer><p>Copyright Example Partners.</p><a href="/privacy">Privacy</a></footer></body></html>"""
    text = extract(page, "https://partners.example/services").text
    for name in services:
        assert f"{name.upper()}_OFFER" in text
        assert f"[{name}](https://partners.example/services/{name.lower()})" in text


def test_a_service_pages_faq_marked_as_questions_leaves_it_a_service_page():
    # Each question of a FAQ marked a schema.org Question in microdata: several of them are a FAQ, not a thread.
    sections = "".join(f"""<section><h2>Offer {n}</h2><p>SECTION_{n} We plan, build and run data platforms for
companies that need their numbers on time, with teams in three countries and twenty years of practice.</p></section>"""
                       for n in range(1, 5))
    faq = "".join(f"""<div itemscope itemprop="mainEntity" itemtype="https://schema.org/Question"><h3 itemprop="name">
Question {n}: why would a company need this service?</h3><div itemscope itemprop="acceptedAnswer"
itemtype="https://schema.org/Answer"><div itemprop="text"><p>ANSWER_{n} Because its data sits in many places and no
one trusts the reports built on it.</p></div></div></div>""" for n in range(1, 4))
    page = f"""<html><head><title>Data services | Example Data</title></head><body><header><nav><a href="/">Home</a>
</nav></header><main><h1>Data services</h1>{sections}<section><h2>FAQ</h2>{faq}</section></main></body></html>"""
    result = extract(page, "https://data.example/services")
    assert result.type != "forum"
    assert all(f"SECTION_{n}" in result.text for n in range(1, 5))


def test_a_service_page_declaring_a_product_without_an_offer_is_read_by_its_sections():
    # A consultancy's page declares a Product for its rating stars: no offer, no variant, no identifier. It is a
    # service page by its shape, named and read as one (not by trafilatura's full reading alone, as a product's).
    sections = "".join(f"""<section><h2>What we do, part {n}</h2><ul><li>SECTION_{n} audits</li><li>Roadmaps</li>
<li>Platform builds</li></ul><p>Teams of five to twenty.</p></section>""" for n in range(1, 6))
    page = f"""<html><head><title>Managed analytics | Example Data</title><script type="application/ld+json">
{{"@context": "https://schema.org", "@type": "Product", "name": "Managed analytics",
"aggregateRating": {{"@type": "AggregateRating", "ratingValue": "4.8", "reviewCount": "31"}}}}</script></head>
<body><header><nav><a href="/">Home</a></nav></header><main><h1>Managed analytics</h1><p>We run your reports and
dashboards for you, so your people can use them instead of fixing them every Monday morning.</p>{sections}</main>
</body></html>"""
    result = extract(page, "https://data.example/managed")
    assert result.type == "service"
    assert all(f"SECTION_{n} audits" in result.text for n in range(1, 6))


def _hero(variant: str) -> str:
    return (f'<div class="ssr-variant {variant}"><h2>Plan your week in minutes</h2><p>HERO_TEXT One board for the '
            "tasks, notes and files of your whole team, shared as you type.</p><p>Trusted by 9,000 teams in 40 "
            "countries, from two-person studios to schools.</p><a href=\"/signup\">Start free</a></div>")


def _plan(name: str, price: str) -> str:
    # Every plan lists the features it shares with the others, between its own name and price.
    return (f"<section><h2>{name}</h2><p>{price} a month</p><ul><li>SHARED_FEATURE Unlimited boards and tasks for "
            "every member</li><li>Files up to 100 MB each</li><li>Calendar and reminders</li></ul></section>")


COPIED = f"""<html><head><title>Boards for teams - Planly</title></head><body><main>
{_hero("variant-wide")}{_hero("variant-narrow")}{_hero("variant-phone")}
{_plan("Free", "0 dollars")}{_plan("Team", "8 dollars")}{_plan("Business", "16 dollars")}
<section><h2>Questions</h2><p>Can I change plans later? Yes, at any time from the settings of your workspace, and
we count the days you have paid for.</p></section></main></body></html>"""


def test_a_section_drawn_once_for_each_screen_size_comes_once_and_plans_keep_their_shared_features():
    # A site builder draws its hero once per breakpoint and hides the others with its style sheet: a reader sees one.
    result = extract(COPIED, "https://planly.test/")
    assert result.type == "service"
    assert result.text.count("HERO_TEXT") == 1
    assert result.text.count("SHARED_FEATURE") == 3
    assert all(price in result.text for price in ("0 dollars", "8 dollars", "16 dollars"))


def test_only_a_run_of_blocks_repeating_an_earlier_run_is_a_copy():
    from webtools.plugins.web_fetch.extract.choice import without_copies

    hero = ("## Plan your week\n\nOne board for the tasks, notes and files of your whole team, shared as you type.\n\n"
            "Trusted by 9,000 teams in 40 countries, from two-person studios to schools and hospitals.")
    assert without_copies(f"{hero}\n\n{hero}\n\nThe rest.") == f"{hero}\n\nThe rest."
    # One block repeated alone (a plan's shared list between its name and price) stays.
    plans = "\n\n".join(f"## {name}\n\n- Unlimited boards and tasks for every member of the team, files and calendar"
                        for name in ("Free", "Team", "Business"))
    assert without_copies(plans) == plans
    # So does a short run: a few words twice ("Learn more", a button) are not a copy of a section.
    short = "## Audit\n\nLearn more\n\nContact us\n\n## Tax\n\nLearn more\n\nContact us"
    assert without_copies(short) == short


def test_a_long_card_with_a_heading_is_written_as_a_section_not_folded_into_one_line():
    from webtools.plugins.web_fetch.extract.listing import cards_markdown

    long = "### Consulting\n\n" + "\n\n".join(f"Paragraph {n} " + "we plan and run projects " * 8 for n in range(3))
    text = cards_markdown(["### [Audit](/a)\n\nShort card on audits.", long, "### Tax\n\nShort card on taxes."],
                          [("/a", ""), ("/c", ""), ("/t", "")])
    assert text.startswith("- [Audit](/a) · Short card on audits.\n\n### Consulting\n\nParagraph 0")
    assert text.endswith("\n\n- [Tax](/t) · Short card on taxes.")
    assert " · Paragraph" not in text


def test_a_mega_menu_trafilatura_reads_as_the_text_is_not_the_text():
    # trafilatura reads the page with its chrome: a <nav>'s long menu of products, each with a line on it, outweighed
    # the short hero, and came back as the page's text.
    groups = {"Design": ["Spec editor", "Mock servers", "Schema checks"],
              "Build": ["Collections", "Workspaces", "Visual flows"],
              "Test": ["Request client", "Test runner", "Command line"],
              "Observe": ["Monitors", "Usage insights", "Alerts"]}
    menu = "".join(f"<section><h3>{group.upper()}</h3>" + "".join(
        f'<a href="/{item.lower().replace(" ", "-")}"><p>{item}</p><p>{item} for your team, MENU_{group}_{n}</p></a>'
        for n, item in enumerate(items)) + "</section>" for group, items in groups.items())
    page = f"""<html><head><title>Example API Platform</title></head><body><nav class="top"><a href="/">Example</a>
<div class="dropdown">{menu}</div></nav><main><section><h1>The API platform for teams</h1><p>HERO_TEXT Design, build,
test and watch your APIs in one place. Built for engineers.</p><a href="/signup">Sign up</a></section></main>
<footer>FOOTER_TEXT Example Inc.</footer></body></html>"""
    text = extract(page, "https://api.example/").text
    assert "HERO_TEXT" in text and "MENU_" not in text and "FOOTER_TEXT" not in text
