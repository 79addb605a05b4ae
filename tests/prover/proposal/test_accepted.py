"""Accepted risks: per-path matching, whole and partial acceptance, review status."""

from __future__ import annotations

import pytest

from prover.errors import ProposalError
from prover.proposal.accepted import apply_accepted_risks, load_accepted_risks
from prover.proposal.findings import Category, FindingPath, make_finding
from tests.prover.proposal.helpers import assess, endpoint, rule


def finding(*hosts: str):  # type: ignore[no-untyped-def]
    paths = tuple(
        FindingPath(binary="/usr/bin/curl", host=h, port=443, policy_name="r", mechanism="m")
        for h in hosts
    )
    return make_finding(Category.CREDENTIAL_REACH_EXPANSION, paths)


def test_all_paths_matched_marks_the_finding_accepted_with_the_last_reason() -> None:
    risks = load_accepted_risks(
        "accepted_risks:\n"
        "  - {query: credential_reach_expansion, reason: first, endpoint: a.com}\n"
        "  - {query: credential_reach_expansion, reason: second, binary: /usr/bin/curl}\n"
    )
    (result,) = apply_accepted_risks((finding("a.com", "b.com"),), risks)
    assert result.accepted and result.accepted_reason == "second"


def test_partially_matched_finding_keeps_only_unmatched_paths() -> None:
    risks = load_accepted_risks(
        "[{query: credential_reach_expansion, reason: ok, endpoint: a.com}]"
    )
    (result,) = apply_accepted_risks((finding("a.com", "b.com"),), risks)
    assert not result.accepted
    assert [p.host for p in result.paths] == ["b.com"]
    assert result.description.endswith("(1 path(s).)")


def test_risk_for_another_category_changes_nothing() -> None:
    risks = load_accepted_risks("[{query: link_local_reach, reason: ok}]")
    original = finding("a.com")
    assert apply_accepted_risks((original,), risks) == (original,)


def test_risk_of_an_unknown_category_is_valid_and_matches_nothing() -> None:
    risks = load_accepted_risks("[{query: inference_relay, reason: later}]")
    assert [risk.query for risk in risks.accepted_risks] == ["inference_relay"]
    original = finding("a.com")
    assert apply_accepted_risks((original,), risks) == (original,)


def test_accepted_findings_no_longer_need_review_but_are_not_auto_approvable() -> None:
    assessment = assess(
        None,
        "r",
        rule([endpoint("api.github.com")], "/usr/bin/curl"),
        accepted_risks="[{query: credential_reach_expansion, reason: needed for releases}]",
    )
    assert assessment.findings[0].accepted
    assert not assessment.needs_review and not assessment.auto_approvable
    assert assessment.validation_result.startswith("prover: 1 new finding")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[{reason: x}]", "accepted_risks[0].query"),
        ("[{query: link_local_reach, hostname: x}]", "unknown field"),
        ("7", "accepted risks: expected"),
    ],
)
def test_malformed_accepted_risks_are_invalid_input(text: str, message: str) -> None:
    with pytest.raises(ProposalError) as raised:
        load_accepted_risks(text)
    assert message in str(raised.value)
