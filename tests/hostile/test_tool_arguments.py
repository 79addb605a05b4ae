"""Bad arguments to every MCP tool: a clean validation error or a clean ``error`` result.

Table-driven over the tools the server lists and over both protocol eras (in-process, and
JSON-RPC framing with the handshake). Nothing here may produce a traceback, an internal
error, or a verdict other than ``error`` for a policy the loader refuses.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from server.app import create_server
from tests.hostile.oracles import TRACEBACK_MARKS

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024
POLICY = "version: 1\nfilesystem_policy:\n  read_only: [/usr]\n"
PROPOSAL = json.dumps(
    {
        "rule_name": "api",
        "rule": {
            "endpoints": [{"host": "api.example.com", "port": 443}],
            "binaries": [{"path": "/usr/bin/curl"}],
        },
    }
)
#: Well-formed arguments of each tool; a tool not listed here is not probed.
VALID: dict[str, dict[str, Any]] = {
    "check_boundary": {"candidate": POLICY, "boundary": POLICY, "timeout_ms": 2000},
    "assess_proposal": {"current": POLICY, "proposal": PROPOSAL, "timeout_ms": 2000},
    "explain_counterexample": {"candidate": POLICY, "boundary": POLICY, "timeout_ms": 2000},
}
#: The argument of each tool that carries a policy text.
POLICY_ARGUMENT = {
    "check_boundary": ("candidate", "boundary"),
    "assess_proposal": ("current",),
    "explain_counterexample": ("candidate", "boundary"),
}
OVER_THE_LIMIT = {
    "ascii": "version: 1\n" + "#" * (4 * MIB),
    "utf8-bytes": "version: 1\n#" + "\u00e9" * (2 * MIB + 1),
}


@pytest.fixture(params=["auto", "legacy"])
async def session(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Client, dict[str, Any]]]:
    async with Client(create_server(), mode=request.param) as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        yield client, tools


def _assert_clean(text: str) -> None:
    assert text.strip()
    for mark in TRACEBACK_MARKS:
        assert mark not in text
    assert not text.startswith("policy-prover internal error")


def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


WRONG_TYPES: tuple[Any, ...] = (123, ["version: 1"], {"version": 1}, True)
BAD_TIMEOUTS: tuple[Any, ...] = (0, -1, 120_001, 10**30, 1.5, "abc", [1], {"ms": 1})


async def _call(session: tuple[Client, dict[str, Any]], tool: str, arguments: Any) -> Any:
    client, tools = session
    if tool not in tools:
        pytest.skip(f"the server does not list {tool} (yet)")
    return await client.call_tool(tool, arguments)


def _json_type(value: Any) -> str:
    kinds = ((bool, "boolean"), (int, "integer"), (list, "array"), (dict, "object"))
    return next(name for kind, name in kinds if isinstance(value, kind))


@pytest.mark.parametrize("tool", list(VALID))
async def test_an_argument_of_the_wrong_type_is_a_validation_error_naming_it(
    session: tuple[Client, dict[str, Any]], tool: str
) -> None:
    for argument in [name for name in VALID[tool] if name != "timeout_ms"]:
        admitted = session[1].get(tool, {}).get("properties", {}).get(argument, {}).get("type")
        for value in WRONG_TYPES:
            if isinstance(admitted, list) and _json_type(value) in admitted:
                continue  # a JSON document argument takes the document as a value too
            result = await _call(session, tool, {**VALID[tool], argument: value})
            assert result.is_error, (argument, value)
            _assert_clean(_text(result))
            assert argument in _text(result)


@pytest.mark.parametrize("tool", list(VALID))
async def test_a_timeout_out_of_range_or_not_an_integer_is_refused(
    session: tuple[Client, dict[str, Any]], tool: str
) -> None:
    for value in BAD_TIMEOUTS:
        result = await _call(session, tool, {**VALID[tool], "timeout_ms": value})
        assert result.is_error, value
        _assert_clean(_text(result))
        assert "timeout_ms" in _text(result)


@pytest.mark.parametrize("tool", list(VALID))
async def test_every_missing_required_argument_is_named(
    session: tuple[Client, dict[str, Any]], tool: str
) -> None:
    result = await _call(session, tool, {})
    required = session[1][tool].get("required", [])
    assert required
    assert result.is_error
    _assert_clean(_text(result))
    for name in required:
        assert name in _text(result)


@pytest.mark.parametrize("arguments", [None, [], "{}", 5], ids=["null", "list", "text", "number"])
async def test_arguments_that_are_not_an_object_are_refused_cleanly(
    session: tuple[Client, dict[str, Any]], arguments: Any
) -> None:
    client, _ = session
    try:
        result = await client.call_tool("check_boundary", arguments)
    except Exception as exc:  # the client or the protocol may refuse it first
        _assert_clean(str(exc) or type(exc).__name__)
        return
    assert result.is_error
    _assert_clean(_text(result))


@pytest.mark.parametrize(
    ("tool", "argument"),
    [(tool, argument) for tool, names in POLICY_ARGUMENT.items() for argument in names],
)
async def test_a_policy_over_the_input_limit_is_an_invalid_input_result(
    session: tuple[Client, dict[str, Any]], tool: str, argument: str
) -> None:
    for text in OVER_THE_LIMIT.values():
        result = await _call(session, tool, {**VALID[tool], argument: text})
        assert not result.is_error
        document = result.structured_content
        assert document is not None
        verdict = document["result"]
        verdict = verdict["result"] if isinstance(verdict, dict) else verdict
        assert verdict == "error"
        assert "4194304-byte input limit" in _text(result)
        _assert_clean(_text(result))


async def test_an_unknown_tool_is_an_error_result_not_a_crash(
    session: tuple[Client, dict[str, Any]],
) -> None:
    client, _ = session
    result = await client.call_tool("no_such_tool", {"x": "\ud800" * 10})
    assert result.is_error
    assert "no_such_tool" in _text(result)


async def test_unknown_extra_arguments_do_not_change_the_verdict(
    session: tuple[Client, dict[str, Any]],
) -> None:
    client, _ = session
    result = await client.call_tool(
        "check_boundary", {**VALID["check_boundary"], "extra": {"a": [1, None]}, "": "x"}
    )
    assert result.structured_content is not None
    assert result.structured_content["result"] == "within_boundary"
