"""What an agent pays in characters: the tool listing and a compact explanation.

Counted on the real stdio server (``tools/list`` as the server writes it) and through the
SDK client (a result's text plus its structured content, as JSON).
"""

from __future__ import annotations

import json
import subprocess
import threading

import jsonschema
import pytest
from mcp import Client

from server.app import create_server
from server.demo import server_parameters

pytestmark = pytest.mark.anyio

MAX_TOOLS_LIST_CHARS = 16_000
#: The fixed cost an agent pays before its first call: tools/list plus the one small
#: resource it may need (the environment format), at most 5,000 tokens of ~4 characters.
MAX_FIXED_COST_CHARS = 20_000
MAX_COMPACT_ONE_VIOLATION_CHARS = 3_000

BOUNDARY = """\
version: 1
network_policies:
  gh:
    endpoints: [{ host: api.github.com, port: 443 }]
    binaries: [{ path: /usr/bin/curl }]
"""
ONE_VIOLATION = """\
version: 1
network_policies:
  gh:
    endpoints: [{ host: api.github.com, port: 443 }]
    binaries: [{ path: /usr/bin/curl }, { path: /usr/bin/node }]
"""


def _tools_list_line() -> str:
    """The ``tools/list`` response exactly as the stdio server writes it."""
    params = server_parameters()
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "size-test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    # stdin stays open until the answer arrives: a server that reads end-of-input first
    # may stop before it answers.
    process = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=params.env,
    )
    timer = threading.Timer(120, process.kill)
    timer.start()
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        process.stdin.flush()
        for line in process.stdout:
            if json.loads(line).get("id") == 2:
                return line.rstrip("\n")
        raise AssertionError("the server ended without answering tools/list")
    finally:
        timer.cancel()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        process.wait(timeout=30)


def test_tools_list_is_small_and_keeps_every_output_schema() -> None:
    line = _tools_list_line()
    tools = json.loads(line)["result"]["tools"]
    assert {t["name"] for t in tools} == {
        "check_boundary",
        "assess_proposal",
        "explain_counterexample",
    }
    assert all(t.get("outputSchema", {}).get("type") == "object" for t in tools)
    assert len(line) <= MAX_TOOLS_LIST_CHARS, len(line)


async def test_a_compact_explanation_of_one_violation_is_small_and_validates() -> None:
    async with Client(create_server()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool(
            "explain_counterexample", {"candidate": ONE_VIOLATION, "boundary": BOUNDARY}
        )
        full = await client.call_tool(
            "explain_counterexample",
            {"candidate": ONE_VIOLATION, "boundary": BOUNDARY, "detail": "full"},
        )
    structured = result.structured_content
    assert structured is not None
    schema = tools["explain_counterexample"].output_schema
    jsonschema.validate(structured, schema)
    jsonschema.validate(full.structured_content, schema)
    text = result.content[0].text  # type: ignore[union-attr]
    size = len(text) + len(json.dumps(structured, ensure_ascii=False))
    assert size <= MAX_COMPACT_ONE_VIOLATION_CHARS, size
    full_text = full.content[0].text  # type: ignore[union-attr]
    assert size < len(full_text) + len(json.dumps(full.structured_content))
    (violation,) = structured["violations"]
    assert violation["what"] == "/usr/bin/node: L4 connect api.github.com:443 ip 8.8.8.8"
    assert violation["fix"] == "remove network_policies.gh.binaries[1]"
    assert structured["fix_verified"] is True


def test_the_fixed_cost_with_the_environment_format_stays_under_5000_tokens() -> None:
    """tools/list plus the environment resource: everything needed to call the tools,
    the environment document's format with a minimal example included."""
    from prover.environment import load_environment
    from server.resources import environment_guide

    guide = environment_guide()
    assert len(_tools_list_line()) + len(guide) <= MAX_FIXED_COST_CHARS
    # Both examples in the guide are valid documents, as written.
    blocks = [b for b in guide.split("\n\n") if b.startswith("    version: 1")]
    assert len(blocks) == 2
    for block in blocks:
        text = "\n".join(line[4:].split("  #")[0].rstrip() for line in block.splitlines())
        assert load_environment(text) is not None
    # The tools' argument points at the guide and carries the minimal example inline.
    line = _tools_list_line()
    assert "policy-prover://reference/environment" in line
    assert "symlinks_complete_beneath: [/workspace]" in line
    assert "--environment" not in line
