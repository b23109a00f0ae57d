"""The web fetch plugin (issue 5 fills it in)."""
from webtools.runtime import Plugin


class WebFetchPlugin(Plugin):
    id = "web_fetch"
    name = "Web fetch"
