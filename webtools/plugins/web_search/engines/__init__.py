"""The engines, in the order the admin lists them. Adding an engine is a file, a line here, and a test
with a recorded response (see docs/engines.md); nothing outside this package names an engine."""

from __future__ import annotations

from .base import Engine
from .bocha import BochaEngine
from .brave import BraveEngine
from .duckduckgo import DuckDuckGoEngine
from .exa import ExaEngine
from .firecrawl import FirecrawlEngine
from .google import GoogleEngine
from .jina import JinaEngine
from .kagi import KagiEngine
from .linkup import LinkupEngine
from .mojeek import MojeekEngine
from .perplexity import PerplexityEngine
from .searchapi import SearchApiEngine
from .searxng import SearxngEngine
from .serpapi import SerpApiEngine
from .serper import SerperEngine
from .serply import SerplyEngine
from .serpstack import SerpstackEngine
from .tavily import TavilyEngine
from .yacy import YacyEngine
from .youcom import YouComEngine

ENGINES: list[Engine] = [
    DuckDuckGoEngine(),
    BraveEngine(),
    TavilyEngine(),
    SearxngEngine(),
    KagiEngine(),
    FirecrawlEngine(),
    GoogleEngine(),
    ExaEngine(),
    SerperEngine(),
    SerpApiEngine(),
    SearchApiEngine(),
    SerpstackEngine(),
    SerplyEngine(),
    PerplexityEngine(),
    JinaEngine(),
    MojeekEngine(),
    LinkupEngine(),
    YouComEngine(),
    YacyEngine(),
    BochaEngine(),
]

__all__ = ["ENGINES", "Engine"]
