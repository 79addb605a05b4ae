"""The ``check_boundary`` tool through the SDK's in-memory ``Client``, in both protocol eras."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from server.app import create_server
from server.cli import main
from tests.support import boundary_cases

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
CASE_IDS = [
    "docs-fs-readonly-subset-within",
    "docs-process-uid-change-unsupported",
    "rest-boundary-deny-removes-authority",
    "net-no-binaries-exceeds-without-identity",  # (root is refused by the runtime)
    "query-witness-keeps-values",
    "resource-1025-rules-inconclusive",
    "parse-unknown-top-level-field-error",
]
#: Receipt fields that depend on the run, not on the inputs.
RUN_DEPENDENT = {"elapsed_ms"}


def _case(case_id: str) -> dict[str, Any]:
    return next(c for c in boundary_cases() if c["id"] == case_id)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


async def test_tools_are_listed_with_input_and_output_schemas_and_annotations(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    tool = tools["check_boundary"]
    properties = tool.input_schema["properties"]
    assert list(properties) == ["candidate", "boundary", "timeout_ms", "environment"]
    assert sorted(tool.input_schema["required"]) == ["boundary", "candidate"]
    assert properties["timeout_ms"]["default"] == 10_000
    assert properties["timeout_ms"]["minimum"] == 1
    assert properties["timeout_ms"]["maximum"] == 60_000
    assert tool.output_schema is not None
    assert list(tool.output_schema["properties"]) == [
        "schema_version",
        "prover_version",
        "check",
        "coverage",
        "result",
        "exit_code",
        "inputs",
        "counterexample",
        "reason_code",
        "reason",
        "receipt",
    ]
    annotations = tool.annotations
    assert annotations is not None
    assert annotations.read_only_hint is True
    assert annotations.idempotent_hint is True
    assert annotations.open_world_hint is False
    assert annotations.destructive_hint is False
    description = tool.description or ""
    for value in ("within_boundary", "exceeds_boundary", "unsupported", "inconclusive", "error"):
        assert value in description


def _cli_json(case: dict[str, Any], directory: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    (directory / "c.yaml").write_text(case["candidate"], encoding="utf-8")
    (directory / "b.yaml").write_text(case["boundary"], encoding="utf-8")
    main(
        ["check", str(directory / "c.yaml"), "--boundary", str(directory / "b.yaml"), "-o", "json"]
    )
    return json.loads(capsys.readouterr().out)


def _cli_text(case: dict[str, Any], directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    main(["check", str(directory / "c.yaml"), "--boundary", str(directory / "b.yaml")])
    return capsys.readouterr().out


@pytest.mark.parametrize("case_id", CASE_IDS)
async def test_check_boundary_gives_the_same_object_as_the_cli_json(
    mode: str, case_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _case(case_id)
    cli = _cli_json(case, tmp_path, capsys)
    async with Client(create_server(), mode=mode) as client:
        result = await client.call_tool(
            "check_boundary", {"candidate": case["candidate"], "boundary": case["boundary"]}
        )
    assert result.is_error is False
    structured = result.structured_content
    assert structured is not None
    assert structured["result"] == case["expect"]["result"]
    assert list(structured) == list(cli)
    assert structured["inputs"] == {"candidate": "candidate", "boundary": "boundary"}
    for key in cli:
        if key not in ("inputs", "receipt"):
            assert structured[key] == cli[key], key
    for key, value in cli["receipt"].items():
        if key not in RUN_DEPENDENT:
            assert structured["receipt"][key] == value, key


@pytest.mark.parametrize("case_id", CASE_IDS)
async def test_text_content_reads_like_the_cli_text_output(
    mode: str, case_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _case(case_id)
    cli = _cli_json(case, tmp_path, capsys)
    async with Client(create_server(), mode=mode) as client:
        result = await client.call_tool(
            "check_boundary", {"candidate": case["candidate"], "boundary": case["boundary"]}
        )
    text = result.content[0].text  # type: ignore[union-attr]
    if cli["result"] == "error":
        assert text == f"result: error\nreason: {cli['reason']}\n"
    else:
        assert text == _cli_text(case, tmp_path, capsys)


async def test_invalid_policy_text_is_a_structured_error_result_not_a_tool_error(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        result = await client.call_tool(
            "check_boundary",
            {"candidate": "version: 1\nfilesystem_policy: [", "boundary": "version: 1"},
        )
    assert result.is_error is False
    assert result.structured_content is not None
    assert result.structured_content["result"] == "error"
    assert result.structured_content["reason_code"] == "invalid_input"
    assert result.structured_content["reason"].startswith(
        "invalid candidate policy: invalid policy: "
    )
    assert result.structured_content["coverage"] is None


@pytest.mark.parametrize("timeout_ms", [0, -1, 60_001])
async def test_a_timeout_outside_1_to_60000_ms_is_refused(mode: str, timeout_ms: int) -> None:
    async with Client(create_server(), mode=mode) as client:
        result = await client.call_tool(
            "check_boundary",
            {"candidate": "version: 1", "boundary": "version: 1", "timeout_ms": timeout_ms},
        )
    assert result.is_error is True
    assert result.structured_content is None


async def test_an_internal_failure_is_an_is_error_result_with_a_useful_message(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("worker pool is gone")

    monkeypatch.setattr("prover.run.runner.check_boundary_async", broken)
    async with Client(create_server(), mode=mode) as client:
        result = await client.call_tool(
            "check_boundary", {"candidate": "version: 1", "boundary": "version: 1"}
        )
    assert result.is_error is True
    assert result.structured_content is None
    text = result.content[0].text  # type: ignore[union-attr]
    assert "RuntimeError: worker pool is gone" in text
    assert "NOT verified" in text
    assert "within_boundary" not in text


async def test_a_fast_check_sends_no_progress_notification(mode: str) -> None:
    received: list[Any] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total, message))

    async with Client(create_server(), mode=mode) as client:
        with anyio.fail_after(20):
            await client.call_tool(
                "check_boundary",
                {"candidate": "version: 1", "boundary": "version: 1"},
                progress_callback=on_progress,
            )
    assert received == []
