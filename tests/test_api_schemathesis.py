"""The settings API against its own OpenAPI schema: schemathesis generates requests from ``/api/schema/``
and checks every answer (no 5xx, status codes, content types and bodies as the schema says).

Driven in process through Django's WSGI application, with a DRF token, DEBUG off; bounded so it stays
well under a minute.
"""
from __future__ import annotations

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db(transaction=True)

#: Examples per operation and generation mode.
EXAMPLES = 50


@pytest.fixture
def schema(settings):
    settings.ALLOWED_HOSTS = ["localhost"]
    return schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())


@pytest.fixture
def token(db):
    user = get_user_model().objects.create_user("fuzz", password="pw-fuzz-123")
    return Token.objects.create(user=user).key


def test_every_operation_answers_as_its_schema_says(schema, token):
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {
        "/api/plugins/settings",
        "/api/plugins/{plugin_id}/settings",
        "/api/plugins/{plugin_id}/tools/{tool_name}",
    }
    for operation in operations:
        # Invalid requests can only be made of a body: a path parameter is any text, and the list has none.
        modes = [schemathesis.GenerationMode.POSITIVE]
        if len(operation.body):
            modes.append(schemathesis.GenerationMode.NEGATIVE)
        for mode in modes:

            @settings(max_examples=EXAMPLES, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            @given(case=operation.as_strategy(generation_mode=mode))
            def check(case):
                case.call_and_validate(headers={"Authorization": f"Token {token}"})

            check()
