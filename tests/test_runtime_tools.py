"""Which tools a turn offers: defaults, user switches, and what the host requests."""
from __future__ import annotations

import pytest

from webtools.exceptions import TurnError, WebtoolsConfigurationError
from webtools.runtime import Registry, Tool, Turn

SCHEMA = {"type": "object"}


def make_registry(*tools: Tool, plugin: str = "p") -> Registry:
    registry = Registry()
    for tool in tools:
        registry.register(tool, plugin)
    return registry


def tool(name, **kwargs) -> Tool:
    return Tool(name, f"{name} tool", SCHEMA, lambda i, c: name, **kwargs)


def offered(turn: Turn) -> list[str]:
    return [t.name for t in turn.tools]


def test_tool_with_default_enabled_is_offered_when_no_tools_are_requested():
    turn = Turn(registry=make_registry(tool("a", default_enabled=True)))
    assert offered(turn) == ["a"]


def test_tool_without_default_enabled_is_offered_only_when_requested():
    registry = make_registry(tool("a"))
    assert offered(Turn(registry=registry)) == []
    assert offered(Turn(registry=registry, requested_tools=["a"])) == ["a"]


def test_stored_choice_overrides_default_for_tool_with_user_toggle():
    registry = make_registry(tool("on", default_enabled=True, user_toggle=True), tool("off", user_toggle=True))
    turn = Turn(registry=registry, choices={"on": False, "off": True})
    assert offered(turn) == ["off"]


def test_stored_choice_is_ignored_for_tool_without_user_toggle():
    registry = make_registry(tool("forced_on", default_enabled=True), tool("forced_off"))
    turn = Turn(registry=registry, choices={"forced_on": False, "forced_off": True})
    assert offered(turn) == ["forced_on"]


def test_requested_tools_are_used_exactly_even_when_empty():
    registry = make_registry(tool("a", default_enabled=True), tool("b"))
    assert offered(Turn(registry=registry, requested_tools=[])) == []
    assert offered(Turn(registry=registry, requested_tools=["b"], choices={"a": True})) == ["b"]


def test_unknown_requested_tool_fails_the_turn():
    with pytest.raises(TurnError, match="Unknown tool: nope"):
        Turn(registry=make_registry(tool("a")), requested_tools=["a", "nope"])


def test_requested_tools_for_model_without_tool_support_fail_the_turn():
    with pytest.raises(TurnError, match="cannot use tools"):
        Turn(registry=make_registry(tool("a")), requested_tools=["a"], supports_tools=False)


def test_empty_request_for_model_without_tool_support_is_fine():
    assert offered(Turn(registry=make_registry(tool("a")), requested_tools=[], supports_tools=False)) == []


def test_enabled_tools_are_skipped_without_failing_when_model_lacks_tool_support():
    turn = Turn(registry=make_registry(tool("a", default_enabled=True)), supports_tools=False)
    assert offered(turn) == []


def test_registry_records_which_plugin_registered_each_tool():
    registry = Registry()
    registry.register(tool("a"), "one")
    registry.register(tool("b"), "two")
    assert registry.owner("a") == "one" and registry.owner("b") == "two"
    assert [t.name for t in registry.tools_of("two")] == ["b"]


def test_two_plugins_registering_one_tool_name_is_a_configuration_error():
    registry = make_registry(tool("a"), plugin="one")
    with pytest.raises(WebtoolsConfigurationError, match="'one' and 'two'"):
        registry.register(tool("a"), "two")


def test_tools_export_in_openai_and_anthropic_formats():
    turn = Turn(registry=make_registry(tool("a", default_enabled=True)))
    assert turn.openai_tools() == [
        {"type": "function", "function": {"name": "a", "description": "a tool", "parameters": SCHEMA}}
    ]
    assert turn.anthropic_tools() == [{"name": "a", "description": "a tool", "input_schema": SCHEMA}]
