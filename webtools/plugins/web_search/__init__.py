"""The web search plugin (issue 4 fills it in)."""
from webtools.runtime import Plugin


class WebSearchPlugin(Plugin):
    id = "web_search"
    name = "Web search"
