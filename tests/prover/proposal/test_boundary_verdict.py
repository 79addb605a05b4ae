"""Beyond the reference: ``adds_access`` and the boundary verdict of the merged policy."""

from __future__ import annotations

import hashlib

import pytest

from prover.errors import PolicyLoadError
from prover.proposal import exit_code, render_text
from prover.proposal.boundary import BOUNDARY_INPUTS, adds_access_of
from prover.results import CheckOutcome, NetworkCounterexample, ReasonCode
from prover.run.budget import Budget, BudgetExhausted
from tests.prover.proposal.helpers import assess, endpoint, policy, rest, rule

GH_READ = {"gh": rule([rest("api.github.com", 443, "GET")], "/usr/bin/gh")}
#: Authority the boundary prover does not model: whatever is checked against it is unsupported.
UNMODELLED = {
    "l4": {
        "endpoints": [
            # A query matcher with a glob alternative is outside every model.
            {
                "host": "api.example.com",
                "port": 443,
                "protocol": "rest",
                "enforcement": "enforce",
                "rules": [
                    {"allow": {"method": "GET", "path": "/x", "query": {"q": {"any": ["a*"]}}}}
                ],
            }
        ],
        "binaries": [{"path": "/usr/bin/curl"}],
    }
}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (CheckOutcome.within("z3"), False),
        (
            CheckOutcome.exceeds(
                NetworkCounterexample(
                    binary="/usr/bin/curl",
                    ancestor_binary=None,
                    binary_identity_required=True,
                    host="example.com",
                    destination_ip="8.8.8.8",
                    trusted_gateway=False,
                    port=443,
                    protocol="l4",
                    method=None,
                    path=None,
                )
            ),
            True,
        ),
        (CheckOutcome.unsupported(ReasonCode.UNSUPPORTED_POLICY_SHAPE, "x"), None),
        (CheckOutcome.inconclusive(ReasonCode.SOLVER_TIMEOUT, "x"), None),
        (CheckOutcome.inconclusive(ReasonCode.CANCELLED, "x"), None),
        (CheckOutcome.error("x"), None),
    ],
)
def test_adds_access_is_decided_only_by_a_proof_or_a_witness(
    outcome: CheckOutcome, expected: bool | None
) -> None:
    assert adds_access_of(outcome) is expected


def test_a_redundant_proposal_adds_no_access_and_is_still_auto_approvable() -> None:
    assessment = assess(
        GH_READ, "gh_again", rule([rest("api.github.com", 443, "GET")], "/usr/bin/gh")
    )
    assert assessment.adds_access is False
    assert assessment.no_new_findings and assessment.security_notes == []
    assert assessment.auto_approvable and not assessment.needs_review
    assert assessment.boundary is None
    assert exit_code(assessment) == 0
    assert "Adds access:  no — " in render_text(assessment)


def test_a_new_host_adds_access() -> None:
    assessment = assess(GH_READ, "pypi", rule([endpoint("pypi.org")], "/usr/bin/pip"))
    assert assessment.adds_access is True
    assert assessment.no_new_findings and assessment.auto_approvable
    assert exit_code(assessment) == 0
    assert "Adds access:  yes — " in render_text(assessment)


def test_adds_access_is_unknown_with_the_reason_when_the_check_is_unsupported() -> None:
    # The proposal touches the unmodelled endpoint's connection (an endpoint both sides
    # share and nothing else touches would be decided alike and left out).
    assessment = assess(UNMODELLED, "gh", rule([endpoint("api.example.com")], "/usr/bin/pip"))
    assert assessment.adds_access is None
    (warning,) = [w for w in assessment.warnings if w.startswith("adds_access is unknown")]
    assert "unsupported (unsupported_policy_shape)" in warning
    assert "Adds access:  unknown — " in render_text(assessment)
    assert exit_code(assessment) == 0


def test_a_proposal_without_findings_can_still_exceed_the_boundary() -> None:
    assessment = assess(
        GH_READ, "pypi", rule([endpoint("pypi.org")], "/usr/bin/pip"), boundary=policy(GH_READ)
    )
    # No findings, but the boundary is exceeded: blocked, with the witness as the reason
    # (a reviewer cannot approve access beyond the sandbox's maximum policy).
    assert assessment.findings == [] and assessment.no_new_findings
    assert not assessment.auto_approvable and assessment.decision == "blocked"
    (blocker,) = assessment.approval_blockers
    assert blocker.startswith("the merged policy exceeds the boundary: network ")
    assert "pypi.org" in blocker
    text = render_text(assessment)
    assert "  Decision:    blocked" in text
    assert text.endswith("BLOCKED — never approve: see the approval blockers.\n")
    boundary = assessment.boundary
    assert boundary is not None
    assert boundary["result"] == "exceeds_boundary"
    assert boundary["counterexample"]["host"] == "pypi.org"
    assert assessment.needs_review
    assert exit_code(assessment) == 1
    text = render_text(assessment)
    assert "Boundary:     exceeds_boundary (FAIL: merged policy against the boundary)" in text
    assert "  counterexample: network " in text and "host=pypi.org:443" in text


def test_a_proposal_with_findings_can_still_be_within_the_boundary() -> None:
    current = {"gh": rule([rest("api.github.com", 443, "GET")], "/usr/bin/gh")}
    ceiling = {"gh": rule([rest("api.github.com", 443, access="full")], "/usr/bin/gh")}
    assessment = assess(
        current,
        "gh",
        rule([rest("api.github.com", 443, "PUT")], "/usr/bin/gh"),
        boundary=policy(ceiling),
    )
    assert assessment.findings != []
    assert assessment.boundary is not None
    assert assessment.boundary["result"] == "within_boundary"
    assert assessment.adds_access is True
    assert exit_code(assessment) == 1
    text = render_text(assessment)
    assert "Boundary:     within_boundary (PASS: merged policy against the boundary)" in text
    assert text.endswith("REVIEW — prover findings require human attention.\n")


def test_a_clean_proposal_within_the_boundary_exits_0() -> None:
    assessment = assess(
        GH_READ,
        "gh2",
        rule([rest("api.github.com", 443, "GET")], "/usr/bin/gh"),
        boundary=policy(GH_READ),
    )
    assert assessment.boundary is not None
    assert assessment.boundary["result"] == "within_boundary"
    assert not assessment.needs_review and exit_code(assessment) == 0
    assert render_text(assessment).endswith("PASS — nothing new needs review.\n")


def test_the_boundary_result_is_the_check_object_bound_to_the_merged_policy() -> None:
    boundary_text = policy(GH_READ)
    assessment = assess(
        GH_READ, "pypi", rule([endpoint("pypi.org")], "/usr/bin/pip"), boundary=boundary_text
    )
    document = assessment.boundary
    assert document is not None and assessment.merged_policy is not None
    assert list(document) == [
        "schema_version",
        "prover_version",
        "check",
        "coverage",
        "result",
        "exit_code",
        "inputs",
        "counterexample",
        "reason_code",
        "reason",
        "receipt",
    ]
    assert (
        document["inputs"]
        == BOUNDARY_INPUTS
        == {
            "candidate": "merged_policy",
            "boundary": "boundary",
        }
    )
    assert document["exit_code"] == 1
    assert document["receipt"]["candidate_sha256"] == _sha256(assessment.merged_policy)
    assert document["receipt"]["boundary_sha256"] == _sha256(boundary_text)
    assert assessment.receipt.merged_policy_sha256 == _sha256(assessment.merged_policy)


def test_a_non_passing_boundary_result_needs_review() -> None:
    assessment = assess(
        GH_READ, "pypi", rule([endpoint("pypi.org")], "/usr/bin/pip"), boundary=policy(UNMODELLED)
    )
    assert assessment.boundary is not None
    assert assessment.boundary["result"] == "unsupported"
    assert assessment.needs_review and exit_code(assessment) == 1
    assert "  reason: " in render_text(assessment)


def test_a_cancelled_budget_stops_the_assessment_before_it_reads_anything() -> None:
    """Nothing partial: a cancelled assessment raises; the faces answer inconclusive."""
    budget = Budget(10_000)
    budget.cancel()
    with pytest.raises(BudgetExhausted) as stopped:
        assess(
            GH_READ,
            "gh2",
            rule([rest("api.github.com", 443, "GET")], "/usr/bin/gh"),
            boundary=policy(GH_READ),
            budget=budget,
        )
    assert stopped.value.cancelled is True


def test_an_exhausted_time_limit_is_never_read_as_redundant() -> None:
    budget = Budget(0)
    with pytest.raises(BudgetExhausted) as stopped:
        assess(
            GH_READ, "gh2", rule([rest("api.github.com", 443, "GET")], "/usr/bin/gh"), budget=budget
        )
    assert stopped.value.cancelled is False


def test_an_application_error_checks_nothing_and_exits_2() -> None:
    assessment = assess(
        None,
        "r",
        rule([{"host": "*.com", "port": 443}], "/usr/bin/curl"),
        boundary=policy(GH_READ),
    )
    assert assessment.application_error is not None
    assert assessment.adds_access is None and assessment.boundary is None
    assert exit_code(assessment) == 2
    assert "Adds access" not in render_text(assessment)


def test_an_invalid_boundary_policy_is_invalid_input() -> None:
    with pytest.raises(PolicyLoadError, match=r"^boundary policy: "):
        assess(GH_READ, "pypi", rule([endpoint("pypi.org")], "/usr/bin/pip"), boundary="version: 2")


def test_each_check_receipt_counts_its_own_time_not_the_shared_budget_age() -> None:
    budget = Budget(10_000)
    budget.started -= 5.0  # the budget is 5 s old; its deadline is unchanged
    assessment = assess(
        GH_READ,
        "pypi",
        rule([endpoint("pypi.org")], "/usr/bin/pip"),
        boundary=policy(GH_READ),
        budget=budget,
    )
    assert assessment.boundary is not None
    assert assessment.boundary["result"] == "exceeds_boundary"
    assert 0 <= assessment.boundary["receipt"]["elapsed_ms"] < 5_000


def test_a_proposal_adding_access_without_a_boundary_says_nothing_bounded_it() -> None:
    assessment = assess(GH_READ, "pypi", rule([endpoint("pypi.org")], "/usr/bin/pip"))
    assert assessment.boundary is None and assessment.adds_access is True
    assert any(w.startswith("no boundary was given") for w in assessment.warnings)
    redundant = assess(GH_READ, "gh", GH_READ["gh"])
    assert not any(w.startswith("no boundary was given") for w in redundant.warnings)
