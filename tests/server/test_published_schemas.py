"""The published schemas: small, and still true of every result."""

from __future__ import annotations

import json

import jsonschema
import pytest
from mcp import Client

from server.app import create_server
from server.resources import policy_schema
from server.tools.schema import compact_schema, prune_defs, quick_to_validate, summarised

pytestmark = pytest.mark.anyio


def test_compaction_keeps_meaning_and_drops_repetition() -> None:
    schema = {
        "title": "Thing",
        "description": "A docstring for developers.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "title": {"title": "Title", "type": "string"},  # a field named title stays
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "mode": {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]},
            "ref": {"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}]},
        },
        "required": ["title"],
        "$defs": {"X": {"title": "X", "type": "object", "properties": {}}},
    }
    out = compact_schema(schema)
    assert list(out["properties"]) == ["title", "n", "mode", "ref"]
    assert out["properties"]["title"] == {"type": "string"}
    assert out["properties"]["n"] == {"type": ["integer", "null"]}
    assert out["properties"]["mode"] == {"enum": ["a", "b", None], "type": ["string", "null"]}
    assert out["properties"]["ref"] == {"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}]}
    assert "description" not in out and "additionalProperties" not in out
    for value in ({"title": "x", "n": None, "mode": None, "ref": None}, {"title": "x", "n": 3}):
        jsonschema.validate(value, out)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"title": "x", "mode": "c"}, out)
    # Input schemas keep their defaults.
    assert compact_schema(schema, frozenset({"title"}))["properties"]["n"]["default"] is None


def test_a_summarised_definition_prunes_what_only_it_used() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "object", "properties": {"c": {"$ref": "#/$defs/C"}}},
            "C": {"type": "string"},
            "Unused": {"type": "string"},
        },
    }
    assert set(prune_defs(schema)["$defs"]) == {"A", "B", "C"}
    out = summarised(schema, {"B": "see the other tool"})
    assert out["$defs"] == {
        "A": schema["$defs"]["A"],
        "B": {"type": "object", "description": "see the other tool"},
    }


def test_quick_to_validate_inlines_single_use_definitions_and_keeps_meaning() -> None:
    schema = {
        "type": "object",
        "properties": {
            "once": {"anyOf": [{"$ref": "#/$defs/Once"}, {"type": "null"}]},
            "twice_a": {"$ref": "#/$defs/Twice"},
            "twice_b": {"$ref": "#/$defs/Twice"},
            "tree": {"$ref": "#/$defs/Tree"},
        },
        "$defs": {
            "Once": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "Twice": {"type": "string"},
            "Tree": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Tree"}}},
        },
    }
    out = quick_to_validate(schema)
    assert out["properties"]["once"]["anyOf"] == [
        {"type": "null"},
        {"type": "object", "properties": {"n": {"type": "integer"}}},
    ]
    assert out["properties"]["twice_a"] == {"$ref": "#/$defs/Twice"}
    # Referenced twice (once by itself): kept as a definition, never expanded forever.
    assert set(out["$defs"]) == {"Twice", "Tree"}
    good = [
        {"once": None, "twice_a": "x", "tree": {"child": {"child": {}}}},
        {"once": {"n": 1}, "twice_b": "y"},
    ]
    bad = [{"once": {"n": "1"}}, {"twice_b": 2}, {"tree": {"child": 3}}, {"once": 4}]
    for value in good:
        jsonschema.validate(value, schema)
        jsonschema.validate(value, out)
    for value in bad:
        for version in (schema, out):
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(value, version)


async def test_every_tool_result_validates_against_the_published_schema() -> None:
    candidate = "version: 1\nfilesystem_policy:\n  read_write: [/tmp]\n"
    boundary = "version: 1\nfilesystem_policy:\n  read_only: [/tmp]\n"
    refused = "version: 1\nfilesystem_policy:\n  read_write: [/]\n"
    proposal = json.dumps(
        {
            "rule_name": "r",
            "rule": {
                "endpoints": [{"host": "pypi.org", "port": 443}],
                "binaries": [{"path": "/usr/bin/pip"}],
            },
        }
    )
    calls = [
        ("check_boundary", {"candidate": candidate, "boundary": boundary}),
        ("check_boundary", {"candidate": "version: 2", "boundary": boundary}),
        ("explain_counterexample", {"candidate": candidate, "boundary": boundary}),
        (
            "explain_counterexample",
            {"candidate": candidate, "boundary": boundary, "detail": "full"},
        ),
        ("assess_proposal", {"current": "version: 1", "proposal": proposal, "boundary": boundary}),
        ("assess_proposal", {"current": "version: 1", "proposal": "{}"}),
        # A candidate the runtime refuses (writes /), repaired and fixed.
        ("explain_counterexample", {"candidate": refused, "boundary": boundary, "detail": "full"}),
    ]
    async with Client(create_server()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            assert result.is_error is False, (name, result)
            jsonschema.validate(result.structured_content, tools[name].output_schema)
        assessed = await client.call_tool(calls[4][0], calls[4][1])
    document = assessed.structured_content
    assert document is not None
    assert document["boundary"]["result"] == "exceeds_boundary"
    assert document["decision"] == "blocked" and document["auto_approvable"] is False
    assert document["approval_blockers"][0].startswith("the merged policy exceeds the boundary")


def test_the_schema_resource_documents_what_an_agent_writes() -> None:
    extra = json.loads(policy_schema())["x-policy-prover"]
    assert extra["access_presets"]["read-only"] == ["GET", "HEAD", "OPTIONS"]
    assert extra["access_presets"]["read-write"][-3:] == ["POST", "PUT", "PATCH"]
    credential = extra["credentials"]["schema"]["$defs"]["Credential"]["properties"]
    assert {"name", "type", "target_hosts"} <= set(credential)
    assert "free text" in extra["credentials"]["description"]
    assert "read_write" in extra["grant_units"]
    assert "maximum policy" in extra["boundary"]


def test_the_schema_resource_documents_the_environment_with_an_example_that_works() -> None:
    """An agent guessed the environment format and failed; the resource now shows it, and
    its example decides a sub-path that is unsupported without evidence."""
    from prover.api import check_boundary

    environment = json.loads(policy_schema())["x-policy-prover"]["environment"]
    example = json.dumps(environment["example"])
    boundary = (
        "version: 1\nfilesystem_policy:\n  include_workdir: false\n  read_write: [/workspace]\n"
        "landlock: {compatibility: hard_requirement}\n"
    )
    candidate = boundary.replace("/workspace]", "/workspace/src/pkg]")
    assert check_boundary(candidate, boundary).outcome.verdict.value == "unsupported"
    decided = check_boundary(candidate, boundary, environment=example).outcome
    assert decided.verdict.value == "within_boundary"
