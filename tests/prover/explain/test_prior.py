"""A result passed in is re-verified, never trusted; proposal results are explained."""

from __future__ import annotations

import json
from typing import Any

from prover.api import check_boundary
from prover.explain import explain
from prover.results.report import boundary_report
from tests.prover.explain.pairs import BOUNDARY, THREE_VIOLATIONS


def _report() -> dict[str, Any]:
    check = check_boundary(THREE_VIOLATIONS, BOUNDARY)
    return boundary_report(
        check.outcome, inputs={"candidate": "c", "boundary": "b"}, receipt=check.receipt
    )


def test_a_matching_result_is_confirmed_and_its_counterexample_replayed() -> None:
    explanation = explain(THREE_VIOLATIONS, BOUNDARY, result=json.dumps(_report()))

    prior = explanation.prior_result
    assert prior is not None and prior.kind == "boundary_check"
    assert prior.agrees is True
    assert "still replays" in prior.note


def test_a_wrong_result_is_reported_and_the_fresh_result_explained() -> None:
    report = _report()
    report.update(result="within_boundary", counterexample=None)

    explanation = explain(THREE_VIOLATIONS, BOUNDARY, result=report)

    prior = explanation.prior_result
    assert prior is not None and prior.agrees is False
    assert "DISAGREES" in prior.note
    assert explanation.result.result == "exceeds_boundary"
    assert explanation.explanation.startswith("Note: a fresh check DISAGREES")


def test_a_result_for_other_policy_texts_is_flagged() -> None:
    report = _report()
    report["receipt"]["candidate_sha256"] = "0" * 64

    explanation = explain(THREE_VIOLATIONS, BOUNDARY, result=report)

    assert "different policy texts" in (
        explanation.prior_result.note if explanation.prior_result else ""
    )


def test_a_bare_counterexample_is_replayed() -> None:
    counterexample = _report()["counterexample"]

    explanation = explain(THREE_VIOLATIONS, BOUNDARY, result=json.dumps(counterexample).encode())

    prior = explanation.prior_result
    assert prior is not None and prior.kind == "counterexample" and prior.agrees is True


def test_a_counterexample_that_does_not_replay_is_said_so() -> None:
    counterexample = {"domain": "filesystem", "access": "read", "path": "/usr"}

    explanation = explain(THREE_VIOLATIONS, BOUNDARY, result=counterexample)

    prior = explanation.prior_result
    assert prior is not None and prior.agrees is False
    assert "does not replay" in prior.note


def test_unreadable_result_text_is_ignored_with_a_note() -> None:
    explanation = explain(THREE_VIOLATIONS, BOUNDARY, result="not json")

    prior = explanation.prior_result
    assert prior is not None and prior.kind == "unrecognised"
    assert explanation.explanation.startswith("The given result was not used")
    assert explanation.fix_verified  # the fresh check is still explained in full


def test_an_assess_proposal_result_is_explained_category_by_category() -> None:
    proposal = {
        "findings": [
            {
                "category": "link_local_reach",
                "paths": [{"binary": "/usr/bin/curl", "host": "169.254.169.254", "port": 80}],
            },
            {
                "category": "capability_expansion",
                "paths": [
                    {
                        "binary": "/usr/bin/gh",
                        "host": "api.github.com",
                        "port": 443,
                        "method": "PUT",
                        "policy_name": "gh",
                    }
                ],
            },
        ],
        "validation_result": "prover: 2 new findings",
        "security_notes": ["Host '*.x' contains a wildcard"],
        "auto_approvable": False,
    }

    explanation = explain(THREE_VIOLATIONS, BOUNDARY, result=proposal)

    assert explanation.prior_result is not None and explanation.prior_result.kind == "proposal"
    assert explanation.proposal is not None
    findings = {f.category: f for f in explanation.proposal.findings}
    assert "metadata" in findings["link_local_reach"].meaning
    assert findings["capability_expansion"].paths == [
        "/usr/bin/gh may PUT api.github.com:443 (rule 'gh')"
    ]
    assert "methods" in findings["capability_expansion"].what_to_change
    assert any("wildcard" in note for note in explanation.proposal.notes)
    assert "2 kind(s)" in explanation.proposal.summary


def test_a_real_assess_proposal_result_is_explained() -> None:
    from prover.proposal import assess_proposal

    current = "version: 1\nfilesystem_policy: {read_write: [/sandbox]}\n"
    proposal = {
        "rule_name": "github_l4",
        "rule": {
            "name": "github_l4",
            "endpoints": [{"host": "api.github.com", "port": 443}],
            "binaries": [{"path": "/usr/bin/curl"}],
        },
    }
    credentials = [{"name": "pat", "type": "github", "target_hosts": ["api.github.com"]}]
    assessment = assess_proposal(current, json.dumps(proposal), credentials=json.dumps(credentials))
    assert assessment.findings  # the proposal gives curl credentialed reach

    explanation = explain(THREE_VIOLATIONS, BOUNDARY, result=assessment.model_dump(mode="json"))

    assert explanation.proposal is not None
    categories = [f.category for f in explanation.proposal.findings]
    assert categories == [f.category.value for f in assessment.findings]
    assert all(f.paths and f.what_to_change for f in explanation.proposal.findings)
