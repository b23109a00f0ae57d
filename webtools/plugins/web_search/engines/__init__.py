"""The engines, in the order the admin lists them. Adding an engine is a file, a line here, and a test
with a recorded response (see docs/engines.md); nothing outside this package names an engine."""

from __future__ import annotations

from .base import Engine
from .brave import BraveEngine
from .duckduckgo import DuckDuckGoEngine
from .exa import ExaEngine
from .firecrawl import FirecrawlEngine
from .google import GoogleEngine
from .kagi import KagiEngine
from .searxng import SearxngEngine
from .tavily import TavilyEngine

ENGINES: list[Engine] = [
    DuckDuckGoEngine(),
    BraveEngine(),
    TavilyEngine(),
    SearxngEngine(),
    KagiEngine(),
    FirecrawlEngine(),
    GoogleEngine(),
    ExaEngine(),
]

__all__ = ["ENGINES", "Engine"]
