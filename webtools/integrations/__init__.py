"""Adapters between a ``Turn`` and a model provider's wire format.

``webtools.integrations.openai`` speaks Chat Completions (``tools``, ``tool_calls``, ``tool`` messages);
``webtools.integrations.anthropic`` speaks Messages (``tools``, ``tool_use``, ``tool_result``). Neither
imports its vendor's SDK: they read SDK objects and plain dicts alike, so a host may call the API with
the SDK, with ``requests``, or through a proxy. See docs/integrating.md.

May import the runtime only.
"""
