"""The ``explain_counterexample`` tool through the SDK's in-memory ``Client``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from server.app import create_server
from server.cli import main
from server.demo import server_parameters
from tests.prover.explain.pairs import BOUNDARY, THREE_VIOLATIONS
from tests.support import boundary_cases

pytestmark = pytest.mark.anyio

NAME = "explain_counterexample"
CASE_IDS = [
    "rest-boundary-does-not-contain-l4",
    "proc-unresolved-user-does-not-mask-landlock",
    "docs-process-uid-change-unsupported",  # (graphql without rules: refused, an error)
    "docs-fs-readonly-subset-within",
    "resource-1025-rules-inconclusive",
    "parse-unknown-top-level-field-error",
]


def _case(case_id: str) -> dict[str, Any]:
    return next(c for c in boundary_cases() if c["id"] == case_id)


def _cli_json(
    candidate: str, boundary: str, directory: Path, capsys: pytest.CaptureFixture[str]
) -> Any:
    (directory / "c.yaml").write_text(candidate, encoding="utf-8")
    (directory / "b.yaml").write_text(boundary, encoding="utf-8")
    main(
        [
            "explain",
            str(directory / "c.yaml"),
            "--boundary",
            str(directory / "b.yaml"),
            "-o",
            "json",
        ]
    )
    return json.loads(capsys.readouterr().out)


async def test_the_tool_is_listed_read_only_with_input_and_output_schemas() -> None:
    async with Client(create_server()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    tool = tools[NAME]
    properties = tool.input_schema["properties"]
    assert list(properties) == [
        "candidate",
        "boundary",
        "result",
        "max_violations",
        "detail",
        "timeout_ms",
        "environment",
        "needs",
    ]
    assert properties["detail"]["default"] == "compact"
    assert sorted(tool.input_schema["required"]) == ["boundary", "candidate"]
    assert properties["max_violations"]["default"] == 20
    assert properties["timeout_ms"]["default"] == 10_000
    assert tool.output_schema is not None
    for key in (
        "summary",
        "violations",
        "blockers",
        "fixed_candidate",
        "fix_verified",
        "verification",
        "analysis",
    ):
        assert key in tool.output_schema["properties"]
    annotations = tool.annotations
    assert annotations is not None
    assert annotations.read_only_hint is True and annotations.destructive_hint is False
    assert "fix_verified" in (tool.description or "")


@pytest.mark.parametrize("case_id", CASE_IDS)
async def test_the_tool_answers_the_same_as_the_cli(
    case_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = _case(case_id)
    cli = _cli_json(case["candidate"], case["boundary"], tmp_path, capsys)
    arguments = {"candidate": case["candidate"], "boundary": case["boundary"]}
    async with Client(create_server()) as client:
        result = await client.call_tool(NAME, {**arguments, "detail": "full"})
        short = await client.call_tool(NAME, arguments)
    assert result.is_error is False
    assert result.structured_content is not None
    assert result.structured_content["analysis"] == cli
    assert cli["result"]["result"] == case["expect"]["result"]
    compact = short.structured_content
    assert compact is not None and compact["analysis"] is None
    assert compact["result"] == cli["result"]["result"]
    assert compact["fixed_candidate"] == cli["fixed_candidate"]
    assert len(compact["violations"]) == len(cli["violations"])
    assert len(compact["blockers"]) == len(cli["blockers"])


async def test_the_tool_answers_the_same_as_the_cli_over_stdio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = _cli_json(THREE_VIOLATIONS, BOUNDARY, tmp_path, capsys)
    async with Client(server_parameters()) as client:
        result = await client.call_tool(
            NAME, {"candidate": THREE_VIOLATIONS, "boundary": BOUNDARY, "detail": "full"}
        )
    assert result.is_error is False
    assert result.structured_content is not None
    assert result.structured_content["analysis"] == cli


async def test_several_violations_and_the_text_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = _cli_json(THREE_VIOLATIONS, BOUNDARY, tmp_path, capsys)
    async with Client(create_server()) as client:
        result = await client.call_tool(NAME, {"candidate": THREE_VIOLATIONS, "boundary": BOUNDARY})
    structured = result.structured_content
    assert structured is not None and len(structured["violations"]) == 3
    assert structured["fixed_candidate"] == cli["fixed_candidate"]
    for line, full in zip(structured["violations"], cli["violations"], strict=True):
        assert line["what"].split(":")[0] in full["counterexample_line"]
        assert line["granted_by"][0].startswith(full["granted_by"][0]["path"])
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("result: exceeds_boundary\n")
    assert "fix verified: yes" in text
    # The text is the summary: one line per violation, the fixed candidate not repeated.
    assert sum(line.startswith("violation ") for line in text.splitlines()) == 3
    assert cli["fixed_candidate"] not in text
    assert "fixed_candidate: in the structured result" in text


@pytest.mark.parametrize("as_text", [True, False])
async def test_a_result_argument_is_re_verified(as_text: bool) -> None:
    wrong: Any = {"result": "within_boundary", "reason_code": None}
    if as_text:
        wrong = json.dumps(wrong)
    async with Client(create_server()) as client:
        result = await client.call_tool(
            NAME, {"candidate": THREE_VIOLATIONS, "boundary": BOUNDARY, "result": wrong}
        )
    structured = result.structured_content
    assert structured is not None
    assert structured["prior"] is not None and "within_boundary" in structured["prior"]


@pytest.mark.parametrize(
    "arguments", [{"max_violations": 0}, {"max_violations": 101}, {"timeout_ms": 0}]
)
async def test_out_of_range_arguments_are_refused(arguments: dict[str, int]) -> None:
    async with Client(create_server()) as client:
        result = await client.call_tool(
            NAME, {"candidate": "version: 1", "boundary": "version: 1", **arguments}
        )
    assert result.is_error is True
    assert result.structured_content is None


async def test_an_internal_failure_is_an_is_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("explainer is gone")

    monkeypatch.setattr("prover.explain.explain", broken)
    async with Client(create_server()) as client:
        result = await client.call_tool(NAME, {"candidate": "version: 1", "boundary": "version: 1"})
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert "RuntimeError: explainer is gone" in text
    assert "NOT verified" in text


async def test_needs_are_kept_and_a_bad_need_is_an_error_naming_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The MCP ``needs`` argument and the CLI's ``--need`` give the same answer."""
    needs = [
        {
            "binary": "/usr/bin/git",
            "host": "raw.github.com",
            "port": 443,
            "destination_ip": "8.8.8.8",
        },
        {"path": "/etc", "access": "read"},
    ]
    arguments = {"candidate": THREE_VIOLATIONS, "boundary": BOUNDARY}
    async with Client(create_server()) as client:
        result = await client.call_tool(NAME, {**arguments, "needs": needs})
        bad = await client.call_tool(NAME, {**arguments, "needs": [{"host": "x", "port": 0}]})
    document = result.structured_content
    assert result.is_error is False and document is not None
    assert document["fix_verified"] is True
    assert [n["status"] for n in document["needs"]] == ["kept", "exceeds_boundary"]
    assert bad.is_error is False and bad.structured_content is not None
    assert bad.structured_content["result"] == "error"
    assert "needs[0].port" in (bad.structured_content["reason"] or "")

    (tmp_path / "c.yaml").write_text(THREE_VIOLATIONS, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(BOUNDARY, encoding="utf-8")
    flags = [flag for need in needs for flag in ("--need", json.dumps(need))]
    main(["explain", str(tmp_path / "c.yaml"), "--boundary", str(tmp_path / "b.yaml"), *flags])
    text = capsys.readouterr().out
    assert "need 1: kept" in text and "need 2: exceeds_boundary | read /etc" in text


def test_the_tool_and_the_reader_limit_needs_alike() -> None:
    from prover.explain.needs import MAX_NEEDS as READER
    from server.tools.explain_counterexample import MAX_NEEDS as TOOL

    assert TOOL == READER


async def test_a_candidate_the_runtime_refuses_comes_back_repaired_and_fixed() -> None:
    """Issue 23: writes /, runs as root, reaches host * (all refused by the runtime): the
    tool answers the refusal with a verified fix that validates against its schema."""
    import jsonschema

    from tests.prover.explain.test_repair import BOUNDARY as LIMITS
    from tests.prover.explain.test_repair import CANDIDATE as REFUSED

    async with Client(create_server()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool(NAME, {"candidate": REFUSED, "boundary": LIMITS})
    document = result.structured_content
    assert result.is_error is False and document is not None
    jsonschema.validate(document, tools[NAME].output_schema)
    assert document["result"] == "error" and document["fix_verified"] is True
    assert document["blockers"][0]["got_past"] is True
    assert "api.github.com" in document["fixed_candidate"]
    assert "'*'" not in document["fixed_candidate"]
    assert "the repaired candidate" in document["verification"]
    text = result.content[0].text  # type: ignore[union-attr]
    assert "fix verified: yes" in text and "repaired" in text
