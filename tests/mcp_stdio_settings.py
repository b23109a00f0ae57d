"""Settings of the MCP server the stdio tests start as a subprocess: the test settings, with a file
database (``DATABASE_URL``, set by the test), loopback servers standing in for public sites and, when
the test names one in ``WEBTOOLS_TEST_BRAVE_URL``, a loopback engine answering as Brave."""
import os

from tests.settings import *  # noqa: F401,F403
from tests.settings import WEBTOOLS
from webtools.net import AddressPolicy

LOOPBACK_POLICY = AddressPolicy.with_overrides(allow=["127.0.0.1/32"])
WEBTOOLS = {**WEBTOOLS, "ADDRESS_POLICY": "tests.mcp_stdio_settings.LOOPBACK_POLICY"}
if os.environ.get("WEBTOOLS_TEST_BRAVE_URL"):
    WEBTOOLS["ENGINE_URLS"] = {"brave": os.environ["WEBTOOLS_TEST_BRAVE_URL"]}
