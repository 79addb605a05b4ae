"""``assess_proposal`` end to end: inputs, JSON shape, receipt, provider rules."""

from __future__ import annotations

import hashlib
import json

import pytest

from prover.errors import PolicyLoadError, ProposalError
from prover.policy.loader import load_policy
from prover.proposal import assess_proposal
from tests.prover.proposal.helpers import (
    GITHUB_CREDENTIALS,
    assess,
    chunk,
    endpoint,
    policy,
    rest,
    rule,
)

JSON_KEYS = {
    "decision",
    "decision_reason",
    "fixed_proposal",
    "findings",
    "validation_result",
    "security_notes",
    "auto_approvable",
    "application_error",
    "no_new_findings",
    "needs_review",
    "approval_blockers",
    "warnings",
    "rule_name",
    "target_rule",
    "proposed_rule",
    "merged_policy",
    "adds_access",
    "boundary",
    "receipt",
}


def test_json_output_carries_the_contract_fields() -> None:
    assessment = assess(None, "r", rule([endpoint("api.github.com")], "/usr/bin/curl"))
    dumped = assessment.model_dump(mode="json")
    assert set(dumped) == JSON_KEYS
    (finding,) = dumped["findings"]
    assert set(finding) >= {"category", "title", "description", "paths", "remediation"}
    assert set(finding["paths"][0]) == {
        "binary",
        "host",
        "port",
        "method",
        "policy_name",
        "mechanism",
    }
    assert dumped["adds_access"] is True and dumped["boundary"] is None
    json.dumps(dumped)


def test_receipt_hashes_every_input_as_given() -> None:
    current, proposal = policy(None), chunk("r", rule([endpoint("a.com")], "/usr/bin/curl"))
    assessment = assess_proposal(current, proposal.encode(), credentials=GITHUB_CREDENTIALS)
    receipt = assessment.receipt
    assert receipt.current_sha256 == hashlib.sha256(current.encode()).hexdigest()
    assert receipt.proposal_sha256 == hashlib.sha256(proposal.encode()).hexdigest()
    assert receipt.credentials_sha256 == hashlib.sha256(GITHUB_CREDENTIALS.encode()).hexdigest()
    assert receipt.accepted_risks_sha256 is None and receipt.registry_sha256 is None
    assert (
        receipt.merged_policy_sha256
        == hashlib.sha256(assessment.merged_policy.encode()).hexdigest()
    )


def test_merged_policy_is_loadable_policy_text() -> None:
    current = {"a": rule([rest("api.github.com", 443, access="read-only")], "/usr/bin/curl")}
    assessment = assess(current, "b", rule([rest("api.github.com", 443, "PUT")], "/usr/bin/curl"))
    merged = load_policy(assessment.merged_policy)
    assert list(merged.network_policies) == ["a"]


def test_provider_rules_are_kept_but_never_folded_into() -> None:
    current = {
        "_provider_github": rule([rest("api.github.com", 443, access="read-only")], "/usr/bin/gh")
    }
    assessment = assess(
        current, "mine", rule([rest("api.github.com", 443, "POST")], "/usr/bin/curl")
    )
    assert assessment.target_rule == "mine"
    assert list(load_policy(assessment.merged_policy).network_policies) == [
        "_provider_github",
        "mine",
    ]


def test_agent_api_body_is_assessed_like_a_chunk() -> None:
    body = json.dumps(
        {
            "intent_summary": "update docs",
            "operations": [
                {
                    "addRule": {
                        "ruleName": "put",
                        "rule": rule([rest("api.github.com", 443, "PUT")], "/usr/bin/curl"),
                    }
                }
            ],
        }
    )
    assessment = assess_proposal(policy(None), body, credentials=GITHUB_CREDENTIALS)
    assert assessment.validation_result == (
        "prover: 1 new finding\n  credential_reach_expansion: api.github.com:443 via /usr/bin/curl"
    )


def test_notes_alone_need_review_and_block_auto_approval() -> None:
    assessment = assess(None, "db", rule([endpoint("db.example.com", 5432)], "/usr/bin/psql"))
    assert assessment.no_new_findings and assessment.security_notes
    assert assessment.needs_review and not assessment.auto_approvable


def test_clean_proposal_is_auto_approvable() -> None:
    assessment = assess(None, "pypi", rule([endpoint("pypi.org")], "/usr/bin/pip"))
    assert assessment.auto_approvable and not assessment.needs_review


def test_unresolvable_credentialed_l4_endpoint_is_flagged_as_a_warning() -> None:
    assessment = assess(None, "gh", rule([endpoint("github.com")], "/usr/bin/curl"))
    assert any(
        "credentialed endpoint 'github.com:443' in rule 'gh' uses L4-only" in w
        for w in assessment.warnings
    )


def test_invalid_current_policy_is_invalid_input_naming_the_document() -> None:
    with pytest.raises(PolicyLoadError, match=r"^current policy: "):
        assess_proposal("version: 2\n", chunk("r", rule([endpoint("a.com")], "/c")))


def test_unknown_mode_is_invalid_input() -> None:
    with pytest.raises(ProposalError, match="mode must be"):
        assess_proposal(policy(None), chunk("r", rule([endpoint("a.com")], "/c")), mode="auto")  # type: ignore[arg-type]


def test_identical_inputs_give_identical_results() -> None:
    first = assess(
        None,
        "r",
        rule(
            [endpoint("169.254.169.254", 80), endpoint("api.github.com")],
            "/usr/bin/curl",
            "/usr/bin/git",
        ),
    )
    second = assess(
        None,
        "r",
        rule(
            [endpoint("169.254.169.254", 80), endpoint("api.github.com")],
            "/usr/bin/curl",
            "/usr/bin/git",
        ),
    )
    assert first == second


def test_merged_policy_keeps_an_empty_filesystem_section_and_omits_absent_ones() -> None:
    current = "version: 1\nfilesystem_policy: {}\n"
    assessment = assess_proposal(current, chunk("r", rule([endpoint("a.com")], "/c")))
    merged = load_policy(assessment.merged_policy)
    assert merged.filesystem_policy is not None and merged.landlock is None
    assert "network_middlewares" not in assessment.merged_policy


def test_merged_policy_text_reads_back_identically_even_for_yaml_1_1_lookalikes() -> None:
    assessment = assess(None, "r", rule([endpoint("a.com")], "/c", name="1e3"))
    merged = load_policy(assessment.merged_policy)
    assert merged.network_policies["r"].name == "1e3"


def test_assessment_has_a_json_schema_for_structured_output() -> None:
    from prover.proposal import ProposalAssessment

    schema = ProposalAssessment.model_json_schema()
    assert set(schema["properties"]) == JSON_KEYS
