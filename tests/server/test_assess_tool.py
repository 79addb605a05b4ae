"""The ``assess_proposal`` tool: in-memory ``Client`` in both protocol eras, and real stdio."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters

import server
from server.app import create_server
from tests.server.test_assess_command import (
    CREDENTIALS,
    CURRENT,
    NEW_HOST,
    case_inputs,
    run_cli,
    without_run_dependent,
)
from tests.support import proposal_cases

pytestmark = pytest.mark.anyio

REPO_ROOT = str(Path(server.__file__).resolve().parent.parent)
CASE_IDS = [
    "P05_link_local_imds_without_credentials",
    "P09_fold_readonly_endpoint_then_add_put_e2e_template",
    "P12_git_on_credentialed_host_bypasses_l7",
    "P18b_providers_v2_credentialed_put",
    "P24_mechanistic_binary_expansion_into_existing_rule",
]
CATEGORIES = (
    "link_local_reach",
    "l7_bypass_credentialed",
    "credential_reach_expansion",
    "capability_expansion",
)


def _case(case_id: str) -> dict[str, Any]:
    return next(c for c in proposal_cases() if c["id"] == case_id)


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


async def _tool(client: Client) -> Any:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    return tools["assess_proposal"]


async def test_the_tool_is_listed_with_schemas_annotations_and_guidance(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        tool = await _tool(client)
    properties = tool.input_schema["properties"]
    assert list(properties) == [
        "current",
        "proposal",
        "credentials",
        "boundary",
        "accepted_risks",
        "registry",
        "mode",
        "timeout_ms",
        "environment",
    ]
    assert sorted(tool.input_schema["required"]) == ["current", "proposal"]
    assert properties["credentials"]["type"] == ["string", "array", "object", "null"]
    assert properties["proposal"]["type"] == ["string", "object"]
    assert properties["mode"]["enum"] == ["agent_authored", "mechanistic"]
    assert properties["mode"]["default"] == "agent_authored"
    timeout = properties["timeout_ms"]
    assert (timeout["default"], timeout["minimum"], timeout["maximum"]) == (10_000, 1, 60_000)
    assert tool.output_schema is not None and tool.output_schema["type"] == "object"
    annotations = tool.annotations
    assert annotations is not None
    assert annotations.read_only_hint is True and annotations.idempotent_hint is True
    assert annotations.open_world_hint is False and annotations.destructive_hint is False
    description = tool.description or ""
    for word in (
        *CATEGORIES,
        "never approve",
        "enforcement: enforce",
        "adds_access",
        "decision",
        "environment's maximum policy",
        "{name, type, target_hosts}",
        "read-only = GET, HEAD, OPTIONS",
        "POST, PUT, PATCH",
        "fixed_proposal",
        "decision_reason",
    ):
        assert word in description


@pytest.mark.parametrize("case_id", CASE_IDS)
async def test_the_tool_answers_like_the_cli_json_and_text(
    mode: str, case_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _case(case_id)
    texts = {**case_inputs(case), "boundary": case["current_policy"]}
    _, cli_json, _ = run_cli(tmp_path, capsys, texts)
    _, cli_text, _ = run_cli(tmp_path, capsys, texts, output="text")
    async with Client(create_server(), mode=mode) as client:
        tool = await _tool(client)
        result = await client.call_tool("assess_proposal", dict(texts))
    assert result.is_error is False
    structured = result.structured_content
    assert structured is not None
    jsonschema.validate(structured, tool.output_schema)
    assert list(structured) == list(json.loads(cli_json))
    assert without_run_dependent(structured) == without_run_dependent(json.loads(cli_json))
    assert result.content[0].text == cli_text  # type: ignore[union-attr]


async def test_a_proposal_and_credentials_given_as_json_values_are_read_as_their_text(
    mode: str,
) -> None:
    """Clients such as the MCP Inspector send a JSON-looking argument as a JSON value."""
    as_text = {"current": CURRENT, "proposal": NEW_HOST, "credentials": CREDENTIALS}
    as_values = {
        **as_text,
        "proposal": json.loads(NEW_HOST),
        "credentials": json.loads(CREDENTIALS),
    }
    async with Client(create_server(), mode=mode) as client:
        expected = await client.call_tool("assess_proposal", as_text)
        result = await client.call_tool("assess_proposal", as_values)
    assert result.is_error is False and result.structured_content is not None
    assert expected.structured_content is not None
    for field in ("findings", "decision", "adds_access", "proposed_rule"):
        assert result.structured_content[field] == expected.structured_content[field]
    assert result.structured_content["receipt"]["credentials_sha256"] is not None


async def test_credentials_given_as_json_text_are_read_as_text(mode: str) -> None:
    arguments = {"current": CURRENT, "proposal": NEW_HOST, "credentials": CREDENTIALS}
    async with Client(create_server(), mode=mode) as client:
        result = await client.call_tool("assess_proposal", arguments)
    assert result.is_error is False and result.structured_content is not None
    receipt = result.structured_content["receipt"]
    assert receipt["credentials_sha256"] is not None
    assert result.structured_content["adds_access"] is True


@pytest.mark.parametrize(
    ("argument", "value", "reason"),
    [
        ("proposal", "{}", "proposal: "),
        ("current", "version: 2", "current policy: "),
        ("boundary", "version: 2", "boundary policy: "),
        ("credentials", "{bad: 1}", "credentials"),
    ],
)
async def test_invalid_input_is_a_structured_error_result(
    mode: str, argument: str, value: str, reason: str
) -> None:
    arguments = {"current": CURRENT, "proposal": NEW_HOST, argument: value}
    async with Client(create_server(), mode=mode) as client:
        tool = await _tool(client)
        result = await client.call_tool("assess_proposal", arguments)
    assert result.is_error is False
    document = result.structured_content
    assert document is not None
    jsonschema.validate(document, tool.output_schema)
    assert (document["result"], document["exit_code"]) == ("error", 2)
    assert document["reason_code"] == "invalid_input"
    assert document["reason"].startswith(reason)
    assert document["inputs"][argument] == argument
    assert document["inputs"]["registry"] is None
    assert result.content[0].text.startswith("result: error\nreason: ")  # type: ignore[union-attr]


@pytest.mark.parametrize("timeout_ms", [0, 60_001])
async def test_a_timeout_outside_1_to_60000_ms_is_refused(mode: str, timeout_ms: int) -> None:
    arguments = {"current": CURRENT, "proposal": NEW_HOST, "timeout_ms": timeout_ms}
    async with Client(create_server(), mode=mode) as client:
        result = await client.call_tool("assess_proposal", arguments)
    assert result.is_error is True and result.structured_content is None


async def test_an_internal_failure_is_an_is_error_result(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("model exploded")

    monkeypatch.setattr("prover.proposal.assess_proposal", broken)
    async with Client(create_server(), mode=mode) as client:
        result = await client.call_tool(
            "assess_proposal", {"current": CURRENT, "proposal": NEW_HOST}
        )
    assert result.is_error is True and result.structured_content is None
    assert "RuntimeError: model exploded" in result.content[0].text  # type: ignore[union-attr]


async def test_the_work_runs_in_a_worker_thread_not_on_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    import prover.proposal

    real = prover.proposal.assess_proposal
    threads: list[threading.Thread] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr("prover.proposal.assess_proposal", spy)
    async with Client(create_server()) as client:
        result = await client.call_tool(
            "assess_proposal", {"current": CURRENT, "proposal": NEW_HOST}
        )
    assert result.is_error is False
    assert threads and threads[0] is not threading.main_thread()


async def test_a_real_stdio_server_answers_like_the_cli(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "server"], env={"PYTHONPATH": REPO_ROOT}
    )
    calls = []
    for case_id in CASE_IDS[:3]:
        case = _case(case_id)
        texts = {**case_inputs(case), "boundary": case["current_policy"]}
        _, cli_json, _ = run_cli(tmp_path, capsys, texts)
        calls.append((texts, json.loads(cli_json)))
    with anyio.fail_after(60):
        async with Client(parameters, mode=mode) as client:
            for texts, cli in calls:
                result = await client.call_tool("assess_proposal", dict(texts))
                assert result.is_error is False
                assert result.structured_content is not None
                assert without_run_dependent(result.structured_content) == without_run_dependent(
                    cli
                )
