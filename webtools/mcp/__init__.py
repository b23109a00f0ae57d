"""The MCP face: the user's tools for any Model Context Protocol client, through the same ``Turn``.

A sibling of ``webtools.api``: another door into the runtime, never a second one. ``server.build_server``
makes an MCP server whose ``tools/list`` gives the turn's tools exactly as ``turn.openai_tools()`` does
and whose ``tools/call`` runs ``turn.call``: the same validation, policies, wrapping of untrusted output
and citations as a host's own model loop, through the official SDK's 2.x line, which speaks ``2025-11-25``
(sessions) and the stateless ``2026-07-28`` per request. One MCP session is one conversation (its turn
cache, its URL provenance); without a session, the conversation a request's ``_meta`` names is kept in
Django's cache (``stateless``). Each call is a turn started for the user by ``webtools.host.start_turn``;
a URL the conversation has not seen is put to the user (elicitation, or an ``input_required`` result)
before anything is sent to it.

Two transports: ``manage.py webtools mcp --user NAME`` (stdio, for a desktop client) and
``asgi.mount_mcp(django_app)`` (streamable HTTP at ``/mcp/``, each request authenticated with the user's
DRF token). Needs the ``mcp`` package: ``pip install 'django-webtools[mcp]'``. See docs/mcp.md.

Part of the Django shell: may import the host and the runtime; only the management command and a
host's ASGI setup import it.
"""
