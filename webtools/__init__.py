"""webtools: web search and web fetch tools for LLM chat applications, as a reusable Django app.

The package holds the version. docs/architecture.md gives the layers (which part may import which)
and what each module owns; tests/test_architecture.py keeps both true.
"""

__version__ = "0.1.0"
