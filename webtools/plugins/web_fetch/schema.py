"""What the model is offered of ``web_fetch``: its description and input schema (the handler is in
``tool``)."""
from __future__ import annotations

from webtools.runtime.cache import USE_CACHE

DESCRIPTION = (
    "Fetch a web page or document, such as a PDF, and return its main text. For a web page, type says "
    "what kind of page it is (article, forum, product, listing, collection, service or documentation): a "
    "forum's posts come each with its author and date, a listing's items as a list with their links. Long "
    "pages come in parts; call again with nextOffset for the next part. When you look for something "
    "specific in a page, such as one answer in long documentation, give query: the first part then holds "
    "the passages that answer it."
)
#: The longest ``query`` web_fetch accepts.
MAX_QUERY = 400
#: The longest URL web_fetch accepts: the limit of sitemaps (sitemaps.org), within what browsers and CDNs
#: commonly take; the schema refuses a longer one, as ``url_too_long``.
MAX_URL = 2048


def input_schema(max_content_tokens: int, shared_cache: bool = False) -> dict:
    """The tool's input schema, telling the model the operator's cap on a part's tokens; ``use_cache``
    when the operator's shared cache is on."""
    schema = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "maxLength": MAX_URL, "description": "The http or https URL to fetch."},
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "Character position to start from: the nextOffset of the previous part.",
            },
            "query": {
                "type": "string",
                "maxLength": MAX_QUERY,
                "description": "What you are looking for in the page, such as a question. When the page is "
                "longer than one part, the first part holds the passages most relevant to it, in page order "
                "under their headings, skipped text marked; ranges lists the character ranges it holds, so "
                "offset reads on from any of them. Leave it out to read the page in order.",
            },
            "max_content_tokens": {
                "type": "integer",
                "minimum": 1,
                "description": f"The most tokens of text to return in this part, at most {max_content_tokens}; "
                "the rest comes with nextOffset.",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    }
    if shared_cache:
        schema["properties"]["use_cache"] = USE_CACHE
    return schema


_TEXT = {"type": "string"}
#: What a successful call returns (``WebFetch.__call__``); fields other tools' versions add are allowed.
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The address the text was read from (after redirects)."},
        "title": _TEXT,
        "type": {"type": "string", "description": "What kind of page it is, for a web page."},
        "published": _TEXT,
        "author": _TEXT,
        "language": _TEXT,
        "content": {"type": "string", "description": "This part of the page's main text, in Markdown."},
        "offset": {"type": "integer", "minimum": 0},
        "nextOffset": {"type": "integer", "description": "Where the next part starts; absent on the last."},
        "ranges": {
            "type": "array",
            "items": {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2},
            "description": "With a query: the [start, end) character ranges of the text this part holds.",
        },
        "totalCharacters": {"type": "integer", "minimum": 0},
        "retrieved_at": {"type": "string", "description": "When the page was downloaded (UTC, ISO 8601)."},
        "rendered": {"type": "boolean", "description": "Whether the page was rendered in a browser."},
    },
    "required": ["url", "content", "offset", "totalCharacters"],
}
