"""The settings API's JSON parser: nesting depth and unstorable text refused before a view sees the body."""
from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.settings import api_settings

from ..runtime import json_input

#: The largest JSON body read; a settings body is a few hundred bytes.
MAX_BODY_BYTES = 100_000


class SafeJSONParser(JSONParser):
    """``JSONParser`` that answers 400 instead of failing: a body nested deeper than
    ``json_input.MAX_DEPTH`` (``[`` x 100000 is a ``RecursionError`` for the stock parser), larger than
    ``MAX_BODY_BYTES``, not UTF-8, or with ``NaN``, is a parse error; a string holding a NUL or a lone
    surrogate is a field error on the field that holds it."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        raw = stream.read(MAX_BODY_BYTES + 1) if stream is not None else b""
        if len(raw) > MAX_BODY_BYTES:
            raise ParseError(f"The body is larger than {MAX_BODY_BYTES} bytes.")
        try:
            data = json_input.loads(raw.decode(encoding))
        except UnicodeDecodeError as err:
            raise ParseError(f"The body is not {encoding} text.") from err
        except json_input.JSONInputError as err:
            raise ParseError(str(err)) from err
        problem = json_input.text_problem(data)
        if problem is not None:
            path, message = problem
            field = path[0] if path and isinstance(path[0], str) else api_settings.NON_FIELD_ERRORS_KEY
            raise ValidationError({field: [message]})
        return data
