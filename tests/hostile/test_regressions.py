"""Bugs the hostile-input campaign found, kept fixed.

- A lone surrogate (``"\\ud800"``, which an in-process caller or an in-memory MCP client can
  pass) made the receipt's SHA-256 raise ``UnicodeEncodeError`` after the check had decided
  (``prover/api.py`` encoded with ``surrogateescape``).
- An integer of more than 4,300 digits in a proposal document (credentials, accepted
  risks, registry) made PyYAML's int conversion raise ``ValueError``; the server answered
  ``policy-prover internal error`` instead of an ``invalid_input`` result.
"""

from __future__ import annotations

import json

import pytest
from mcp import Client

from prover.api import check_boundary
from prover.errors import ProverError
from prover.proposal import assess_proposal
from prover.results import ReasonCode, Verdict
from server.app import create_server

LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udc80", "\udfff"]
HUGE_INTEGER = "x: " + "9" * 4301 + "\n"
POLICY = "version: 1\nfilesystem_policy:\n  read_write: [/sandbox]\n"
PROPOSAL = json.dumps(
    {
        "rule_name": "api",
        "rule": {
            "endpoints": [{"host": "example.com", "port": 443}],
            "binaries": [{"path": "/usr/bin/curl"}],
        },
    }
)


@pytest.mark.parametrize("surrogate", LONE_SURROGATES, ids=ascii)
@pytest.mark.parametrize("side", ["candidate", "boundary"])
def test_a_lone_surrogate_in_a_policy_text_is_an_invalid_input_result(
    surrogate: str, side: str
) -> None:
    hostile, plain = f"version: 1\n# {surrogate}\n", "version: 1\n"
    pair = (hostile, plain) if side == "candidate" else (plain, hostile)
    check = check_boundary(*pair, timeout_ms=2000)
    assert check.outcome.verdict is Verdict.ERROR
    assert check.outcome.reason_code is ReasonCode.INVALID_INPUT
    assert check.receipt.candidate_sha256 is not None
    assert check.receipt.boundary_sha256 is not None


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("tool", ["check_boundary", "explain_counterexample"])
async def test_a_lone_surrogate_sent_to_a_checking_tool_is_an_error_result(
    mode: str, tool: str, anyio_backend: str
) -> None:
    arguments = {"candidate": "version: 1\n# \ud800\n", "boundary": "version: 1\n"}
    async with Client(create_server(), mode=mode) as client:
        result = await client.call_tool(tool, arguments)
    assert not result.is_error
    document = result.structured_content
    assert document is not None
    verdict = document["result"]
    assert (verdict["result"] if isinstance(verdict, dict) else verdict) == "error"


@pytest.mark.parametrize("argument", ["credentials", "accepted_risks", "registry"])
def test_a_huge_integer_in_a_proposal_document_is_a_proposal_error(argument: str) -> None:
    with pytest.raises(ProverError):
        assess_proposal(POLICY, PROPOSAL, **{argument: HUGE_INTEGER}, timeout_ms=2000)


@pytest.mark.anyio
async def test_a_huge_integer_sent_to_assess_proposal_is_an_invalid_input_result(
    anyio_backend: str,
) -> None:
    async with Client(create_server()) as client:
        arguments = {"current": POLICY, "proposal": PROPOSAL, "credentials": HUGE_INTEGER}
        result = await client.call_tool("assess_proposal", arguments)
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["result"] == "error"
    assert result.structured_content["reason_code"] == "invalid_input"


def test_a_huge_integer_in_a_policy_is_refused_by_the_policy_loader() -> None:
    check = check_boundary("version: 1\n" + HUGE_INTEGER, "version: 1\n", timeout_ms=2000)
    assert check.outcome.verdict is Verdict.ERROR
    assert "more than 40 digits" in (check.outcome.reason or "")
