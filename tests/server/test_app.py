"""The server's resources and prompts through the in-memory ``Client``, in both eras."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from mcp import Client, MCPError

from prover.results import ReasonCode, Verdict
from server.app import create_server
from server.examples import examples

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


async def test_server_identifies_itself_with_instructions(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        assert client.server_info is not None
        assert client.server_info.name == "policy-prover"
        assert "within_boundary" in (client.instructions or "")


async def test_resources_and_templates_are_listed(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        templates = [
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        ]
    assert set(resources) == {
        "policy-prover://schema/policy",
        "policy-prover://reference/results",
        "policy-prover://reference/environment",
        "policy-prover://examples",
    }
    assert all(r.description for r in resources.values())
    assert templates == ["policy-prover://examples/{name}"]


async def test_the_policy_schema_resource_is_a_json_schema(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        result = await client.read_resource("policy-prover://schema/policy")
    content = result.contents[0]
    assert content.mime_type == "application/schema+json"
    schema = json.loads(content.text)  # type: ignore[union-attr]
    assert schema.get("type") == "object"
    assert "version" in schema.get("properties", {})


async def test_the_result_catalogue_covers_every_result_and_reason_code(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        result = await client.read_resource("policy-prover://reference/results")
    catalogue = json.loads(result.contents[0].text)  # type: ignore[union-attr]
    assert catalogue["passing_results"] == ["within_boundary"]
    assert {r["result"] for r in catalogue["results"]} == {v.value for v in Verdict}
    assert {r["reason_code"] for r in catalogue["reason_codes"]} == {c.value for c in ReasonCode}
    for entry in catalogue["results"] + catalogue["reason_codes"]:
        assert entry["meaning"] and entry["what_to_do"]
    cancelled = next(r for r in catalogue["reason_codes"] if r["reason_code"] == "cancelled")
    assert cancelled["exit_code"] == 130


async def test_every_example_is_listed_and_readable(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        index = json.loads(
            (await client.read_resource("policy-prover://examples")).contents[0].text  # type: ignore[union-attr]
        )
        texts = {
            entry["name"]: (await client.read_resource(entry["uri"])).contents[0].text  # type: ignore[union-attr]
            for entry in index["examples"]
        }
    assert index["boundary"] == "boundary"
    assert texts == {example.name: example.text for example in examples()}
    assert all(text.lstrip().startswith(("#", "version")) for text in texts.values())


async def test_an_unknown_example_is_a_not_found_protocol_error(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        with pytest.raises(MCPError) as info:
            await client.read_resource("policy-prover://examples/nope")
    assert info.value.code == -32602


async def test_both_prompts_are_listed_with_their_arguments(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert set(prompts) == {"vet_subagent_policy", "self_check_policy_change"}
    vet = prompts["vet_subagent_policy"]
    assert [(a.name, a.required) for a in vet.arguments or []] == [
        ("subagent_policy", True),
        ("my_policy", True),
    ]
    change = prompts["self_check_policy_change"]
    assert [(a.name, a.required) for a in change.arguments or []] == [
        ("proposed_policy", True),
        ("boundary_policy", True),
        ("change_summary", False),
    ]


async def test_the_vet_prompt_puts_the_subagent_policy_as_candidate(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        prompt = await client.get_prompt(
            "vet_subagent_policy",
            {"subagent_policy": "SUBAGENT-POLICY-TEXT", "my_policy": "MY-POLICY-TEXT"},
        )
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert prompt.messages[0].role == "user"
    assert "check_boundary" in text and "within_boundary" in text
    # All three tools: check, explain for a verified fix, assess before adding a rule.
    assert "explain_counterexample" in text and "fixed_candidate" in text
    assert "assess_proposal" in text and "decision" in text
    assert text.index("SUBAGENT-POLICY-TEXT") < text.index("MY-POLICY-TEXT")
    assert "(candidate)" in text.split("SUBAGENT-POLICY-TEXT")[0]


async def test_the_self_check_prompt_includes_the_change_summary_when_given(mode: str) -> None:
    async with Client(create_server(), mode=mode) as client:
        with_summary = await client.get_prompt(
            "self_check_policy_change",
            {"proposed_policy": "P", "boundary_policy": "B", "change_summary": "allow pypi"},
        )
        without = await client.get_prompt(
            "self_check_policy_change", {"proposed_policy": "P", "boundary_policy": "B"}
        )
    assert "The change: allow pypi" in with_summary.messages[0].content.text  # type: ignore[union-attr]
    assert "The change:" not in without.messages[0].content.text  # type: ignore[union-attr]
