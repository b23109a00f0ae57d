"""The model loops of README.md and docs/integrating.md, run as they are written.

Each loop block (a Python block that starts a turn and calls the model) is read from the docs, so docs
and test cannot drift, and executed unchanged: the real ``openai`` and ``anthropic`` SDKs, configured
through their own environment variables (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``), talk to a
scripted model on 127.0.0.1. The user pastes the link of a loopback page and asks for a summary; the
model asks to fetch it; the page's text must reach the model. A loop that did not tell the turn what the
user wrote gets "Fetch only URLs from the conversation or from search results." instead.
"""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.llm_server import ScriptedAnthropic, ScriptedLLM, answer, ask, tool_messages, tool_results
from tests.servers import LoopbackServer, Reply

REPO = Path(__file__).resolve().parent.parent
PAGE = """<!doctype html><html><head><title>Solar sails</title></head><body><article>
<h1>Solar sails</h1><p>A solar sail is pushed by the pressure of sunlight: photons carry momentum, and
when they bounce off a large thin mirror they give a little of it to the spacecraft.</p>
<p>The push is tiny but it never runs out, so a sail keeps speeding up for as long as the Sun shines on
it, and the first one to fly between planets was launched in 2010.</p></article></body></html>"""
PAGE_TEXT = "photons carry momentum"


def loop_blocks(name: str) -> list[str]:
    """The Python blocks of ``name`` that start a turn and call a model."""
    text = (REPO / name).read_text()
    return [body for body in re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
            if "start_turn(" in body and re.search(r"\.(completions|messages)\.create\(", body)]


LOOPS = [(name, index, block) for name in ("README.md", "docs/integrating.md")
         for index, block in enumerate(loop_blocks(name))]


def test_the_docs_have_their_loops():
    assert [(name, "anthropic" if "import anthropic" in block else "openai") for name, _, block in LOOPS] == [
        ("README.md", "openai"), ("docs/integrating.md", "openai"), ("docs/integrating.md", "anthropic")]


@pytest.mark.parametrize("name, index, block", LOOPS, ids=[f"{n}-{i}" for n, i, _ in LOOPS])
def test_each_loop_tells_the_turn_what_the_user_wrote_and_stops(name, index, block):
    """Before the model first runs, the loop records the user's messages (``observe``), and the loop has
    a step limit: a ``range``, never ``while True``."""
    assert "while True" not in block
    assert re.search(r"for \w+ in range\(", block)
    observe, create = block.find("wt.observe(turn, messages)"), re.search(r"\.create\(", block).start()
    assert 0 <= observe < create


@pytest.fixture
def site(settings):
    """A loopback page, let through the guard (ADDRESS_POLICY) as the only private address."""
    from webtools.net import AddressPolicy

    with LoopbackServer({
        "/robots.txt": Reply(200, {"Content-Type": "text/plain"}, "User-agent: *\nAllow: /\n"),
        "/sails": Reply(200, {"Content-Type": "text/html; charset=utf-8"}, PAGE),
    }) as server:
        settings.WEBTOOLS = {**settings.WEBTOOLS,
                             "ADDRESS_POLICY": AddressPolicy.with_overrides(allow=["127.0.0.1/32"])}
        yield server


def run_loop(block: str, user, link: str, llm, monkeypatch):
    """The block executed as a module of its own, then its ``answer`` called with the pasted link."""
    if "import anthropic" in block:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", llm.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    else:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    namespace: dict = {"__name__": "docs_loop"}
    exec(compile(block, "docs_loop", "exec"), namespace)
    messages = [{"role": "user", "content": f"Summarise {link} in one sentence, please."}]
    args = (user, messages) if "import anthropic" in block else (user, SimpleNamespace(pk=7), messages)
    return namespace, namespace["answer"](*args)


def model_saw(block: str, request: dict) -> list[str]:
    """The tool results a recorded request gave the model, as text."""
    if "import anthropic" in block:
        return [block["content"] if isinstance(block["content"], str) else str(block["content"])
                for block in tool_results(request)]
    return [message["content"] for message in tool_messages(request)]


# A model the SDK calls deprecated is an error: the docs name one a reader can still use.
@pytest.mark.filterwarnings("error:The model:DeprecationWarning")
@pytest.mark.django_db
@pytest.mark.parametrize("name, index, block", LOOPS, ids=[f"{n}-{i}" for n, i, _ in LOOPS])
def test_the_loop_fetches_the_link_the_user_pasted(name, index, block, site, django_user_model, monkeypatch):
    user = django_user_model.objects.create_user("paula", password="pw-paula-1234")
    link = site.url("/sails")
    scripted = ScriptedAnthropic if "import anthropic" in block else ScriptedLLM
    with scripted([ask(("web_fetch", {"url": link})), answer("Sunlight pushes the sail.")]) as llm:
        _, returned = run_loop(block, user, link, llm, monkeypatch)
    assert returned[0] == "Sunlight pushes the sail."
    assert len(llm.requests) == 2
    [seen] = model_saw(block, llm.requests[1])
    assert PAGE_TEXT in seen, seen
    assert {"url": link, "title": "Solar sails"} in returned[1]  # the reply's sources


@pytest.mark.django_db
@pytest.mark.parametrize("name, index, block", LOOPS, ids=[f"{n}-{i}" for n, i, _ in LOOPS])
def test_a_model_that_never_stops_asking_is_stopped(name, index, block, site, django_user_model, monkeypatch):
    user = django_user_model.objects.create_user("paula", password="pw-paula-1234")
    link = site.url("/sails")
    scripted = ScriptedAnthropic if "import anthropic" in block else ScriptedLLM
    with scripted([ask(("web_fetch", {"url": link}))] * 50) as llm:
        _, returned = run_loop(block, user, link, llm, monkeypatch)
    assert 2 <= len(llm.requests) <= 10
    assert returned[0] == ""
