"""Every acceptance case of tests/data/proposal_cases.yaml, through the library."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from prover.proposal import assess_proposal
from tests.support import proposal_cases

DIVERGENCES = {
    "P25_link_local_behind_read_only_l7_quirk": (
        "deliberate divergence (spec §11.1): a GET-only rule to 169.254.169.254 still lets curl "
        "read instance credentials from the metadata service, so link_local_reach is reported"
    ),
}


def _params() -> list[Any]:
    params = []
    for case in proposal_cases():
        marks = []
        if case["id"] in DIVERGENCES:
            marks.append(pytest.mark.xfail(strict=True, reason=DIVERGENCES[case["id"]]))
        params.append(pytest.param(case, id=case["id"], marks=marks))
    return params


def _assess(case: dict[str, Any]) -> Any:
    proposal = json.dumps(
        {"rule_name": case["proposal"]["rule_name"], "rule": case["proposal"]["rule"]}
    )
    return assess_proposal(
        case["current_policy"],
        proposal,
        credentials=json.dumps(case.get("credentials") or []),
        mode=case.get("mode", "agent_authored"),
    )


@pytest.mark.parametrize("case", _params())
def test_case_reports_the_expected_delta_and_notes(case: dict[str, Any]) -> None:
    expect = case["expect"]
    assessment = _assess(case)
    assert assessment.application_error is None
    assert [f.category.value for f in assessment.findings] == expect["findings"]
    assert assessment.no_new_findings is expect["no_new_findings"]
    if "validation_result" in expect:
        assert assessment.validation_result == expect["validation_result"]
    for note in expect.get("security_notes_contains", []):
        assert note in assessment.security_notes
    for fragment in expect.get("security_notes_not_contains", []):
        assert not any(fragment in note for note in assessment.security_notes)
    if expect.get("security_notes_empty"):
        assert assessment.security_notes == []
    if "auto_mode_status" in expect:
        assert assessment.auto_approvable is (expect["auto_mode_status"] == "approved")
    if "canonical_rule_name" in expect:
        assert assessment.target_rule == expect["canonical_rule_name"]
    if "merged_policy" in case:
        assert yaml.safe_load(assessment.merged_policy) == yaml.safe_load(case["merged_policy"])


def test_case_file_is_present_and_has_cases() -> None:
    assert len(proposal_cases()) >= 19
