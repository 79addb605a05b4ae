"""A policy the runtime refuses is an ``error`` naming every violation, on every face.

OpenShell (2f7fb65) never runs a policy its validator refuses (``validate_sandbox_policy``
and ``find_endpoint_ambiguities`` in ``openshell-policy``: the gateway answers
INVALID_ARGUMENT, a policy read from the image is replaced by the restrictive default), so
the default semantics cannot prove anything about it: check_boundary, explain and
assess answer ``error`` (exit code 2), listing the problems of both policies at once. The
reference semantics keep the reference's verdicts. The violation texts below are
openshell-validate's (``tests/data/mainline_validation.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client

from prover.api import check_boundary
from prover.errors import PolicyLoadError
from prover.explain.core import explain
from prover.proposal import assess_proposal
from prover.results import ReasonCode, Verdict
from server.app import create_server
from server.cli import main

ROOT = "version: 1\nprocess: {run_as_user: root}\nfilesystem_policy: {read_write: [/]}\n"
ROOT_REASONS = (
    "run_as_user must be 'sandbox' or a numeric UID/GID in range [1, 4294967294], got 'root'",
    "read-write path is overly broad: /",
)
NETWORK = (
    "version: 1\nnetwork_policies:\n  r:\n    binaries: [{path: /usr/bin/curl}]\n"
    "    endpoints:\n      - {host: '*.com', ports: [0]}\n"
    "      - {host: a.example.com, port: 443, protocol: https}\n"
)
NETWORK_REASONS = (
    "network policy 'r': TLD wildcard '*.com' is not allowed",
    "network policy 'r': endpoint '*.com' has invalid port 0; expected 1..=65535",
    "network policy 'r': endpoint 1 has invalid L7 configuration: unknown protocol 'https'",
)
FINE = "version: 1\nfilesystem_policy: {read_only: [/usr], read_write: [/tmp]}\n"
PROPOSAL = json.dumps(
    {
        "rule_name": "new",
        "rule": {
            "endpoints": [{"host": "b.example.com", "port": 443}],
            "binaries": [{"path": "/usr/bin/curl"}],
        },
    }
)


def _names_both(reason: str) -> None:
    assert "candidate policy: the OpenShell runtime refuses it" in reason
    assert "boundary policy: the OpenShell runtime refuses it" in reason
    for expected in ROOT_REASONS + NETWORK_REASONS:
        assert expected in reason, expected


def test_check_boundary_names_every_violation_of_both_policies() -> None:
    outcome = check_boundary(ROOT, NETWORK).outcome
    assert outcome.verdict is Verdict.ERROR
    assert outcome.reason_code is ReasonCode.INVALID_INPUT and outcome.exit_code == 2
    _names_both(outcome.reason or "")
    assert (outcome.reason or "").index("invalid candidate") < (outcome.reason or "").index(
        "invalid boundary"
    )


def test_the_reference_semantics_keep_their_verdict() -> None:
    outcome = check_boundary(ROOT, FINE, reference_semantics=True).outcome
    assert outcome.verdict is not Verdict.ERROR  # the reference runs no runtime validator
    assert "the OpenShell runtime refuses it" not in (outcome.reason or "")


def test_a_refused_boundary_is_an_error_even_for_an_identical_candidate() -> None:
    outcome = check_boundary(NETWORK, NETWORK).outcome
    assert outcome.verdict is Verdict.ERROR
    for expected in NETWORK_REASONS:
        assert expected in (outcome.reason or "")


def test_the_cli_answers_error_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "c.yaml").write_text(ROOT, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(NETWORK, encoding="utf-8")
    argv = ["check", str(tmp_path / "c.yaml"), "--boundary", str(tmp_path / "b.yaml")]
    assert main([*argv, "--output", "json"]) == 2
    document = json.loads(capsys.readouterr().out)
    assert (document["result"], document["reason_code"]) == ("error", "invalid_input")
    _names_both(document["reason"])


def test_the_mcp_tool_answers_error() -> None:
    async def call() -> dict[str, object]:
        async with Client(create_server()) as client:
            result = await client.call_tool(
                "check_boundary", {"candidate": ROOT, "boundary": NETWORK}
            )
        assert result.is_error is False and result.structured_content is not None
        return result.structured_content

    document = anyio.run(call)
    assert document["result"] == "error" and document["exit_code"] == 2
    _names_both(str(document["reason"]))


def test_explain_answers_error_and_says_the_runtime_refuses_it() -> None:
    explanation = explain(ROOT, NETWORK).model_dump(mode="json")
    assert explanation["result"]["result"] == "error"
    _names_both(explanation["result"]["reason"])
    assert "Fix every violation the runtime names" in json.dumps(explanation)


def test_assess_refuses_a_current_and_a_boundary_policy_the_runtime_refuses() -> None:
    with pytest.raises(PolicyLoadError) as caught:
        assess_proposal(ROOT, PROPOSAL, boundary=NETWORK)
    message = caught.value.message
    assert "current policy: the OpenShell runtime refuses it" in message
    assert "boundary policy: the OpenShell runtime refuses it" in message
    for expected in ROOT_REASONS + NETWORK_REASONS:
        assert expected in message


def test_assess_through_the_cli_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "current.yaml").write_text(ROOT, encoding="utf-8")
    (tmp_path / "proposal.json").write_text(PROPOSAL, encoding="utf-8")
    status = main(
        [
            "assess",
            "-o",
            "json",
            "--current",
            str(tmp_path / "current.yaml"),
            "--proposal",
            str(tmp_path / "proposal.json"),
        ]
    )
    captured = capsys.readouterr()
    assert status == 2
    assert ROOT_REASONS[0] in captured.out + captured.err


def test_a_policy_mainline_accepts_is_not_refused() -> None:
    """Landlock modes other than the two documented ones run as best effort (10 corpus
    policies use them), so they are checked, not refused."""
    strict = FINE + "landlock: {compatibility: strict}\n"
    best = FINE + "landlock: {compatibility: best_effort}\n"
    assert check_boundary(strict, best).outcome.verdict is Verdict.WITHIN
    assert check_boundary(best, strict).outcome.verdict is Verdict.WITHIN
