"""ASGI entry point of the demo host: Django, with the MCP endpoint at /mcp/ when ``mcp`` is installed."""
import importlib.util
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
application = get_asgi_application()

if importlib.util.find_spec("mcp") is not None:
    from webtools.mcp.asgi import mount_mcp

    application = mount_mcp(application)
