"""webtools: web search and web fetch tools for LLM chat applications, as a reusable Django app."""

__version__ = "0.1.0"
