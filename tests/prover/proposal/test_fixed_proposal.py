"""A blocked proposal comes back fixed, the decision says why (issue 23, item 3)."""

from __future__ import annotations

import json

from prover.proposal import assess_proposal, render_text
from tests.prover.proposal.helpers import assess, endpoint, policy, rest, rule

GH_READ = {"gh": rule([rest("api.github.com", 443, "GET")], "/usr/bin/gh")}
BOUNDARY = policy({**GH_READ, "cdn": rule([endpoint("*.cdn.example.com")], "/usr/bin/curl")})


def _two_binaries() -> dict[str, object]:
    found = rule([endpoint("*.cdn.example.com")], "/usr/bin/curl")
    found["binaries"].append({"path": "/usr/bin/node"})  # type: ignore[union-attr]
    return found


def test_a_proposal_beyond_the_boundary_comes_back_narrowed_and_reassessed() -> None:
    assessment = assess(GH_READ, "cdn", _two_binaries(), boundary=BOUNDARY)

    assert assessment.decision == "blocked"
    assert assessment.decision_reason.startswith("never approve: the merged policy exceeds")
    fixed = assessment.fixed_proposal
    assert fixed is not None and fixed.found and fixed.proposal is not None
    assert fixed.proposal["rule"]["binaries"] == [{"path": "/usr/bin/curl"}]
    (dropped,) = fixed.dropped
    assert "/usr/bin/node" in dropped and "drop only /usr/bin/node" in dropped
    # The offer holds: the narrowed proposal, assessed on its own, is within the boundary.
    again = assess_proposal(policy(GH_READ), json.dumps(fixed.proposal), boundary=BOUNDARY)
    assert again.decision == fixed.decision and again.decision != "blocked"
    assert again.boundary is not None and again.boundary["result"] == "within_boundary"
    assert again.fixed_proposal is None
    text = render_text(assessment)
    assert "  Because:     never approve: the merged policy exceeds" in text
    assert "Fixed proposal (needs_review; pass fixed_proposal.proposal" in text


def test_an_always_blocked_endpoint_is_dropped_with_its_reason() -> None:
    proposed = rule([endpoint("pypi.org"), endpoint("169.254.169.254")], "/usr/bin/pip")
    assessment = assess(GH_READ, "pypi", proposed)

    assert assessment.decision == "blocked"
    assert "169.254.169.254" in assessment.decision_reason
    fixed = assessment.fixed_proposal
    assert fixed is not None and fixed.found and fixed.proposal is not None
    assert [e["host"] for e in fixed.proposal["rule"]["endpoints"]] == ["pypi.org"]
    (dropped,) = fixed.dropped
    assert dropped.startswith("endpoint 169.254.169.254:443: ") and "always-blocked" in dropped


def test_no_fixed_proposal_when_nothing_added_fits_and_it_says_why() -> None:
    """An exact host may reach private addresses the boundary's wildcard may not: the
    fix deletes it, and the dropped entry names the closest boundary entry's reason."""
    proposed = rule([endpoint("x.cdn.example.com"), endpoint("localhost")], "/usr/bin/curl")
    assessment = assess(GH_READ, "cdn", proposed, boundary=BOUNDARY)

    fixed = assessment.fixed_proposal
    assert fixed is not None and not fixed.found and fixed.proposal is None
    assert fixed.reason is not None and "deletes the whole rule" in fixed.reason
    assert any(d.startswith("endpoint localhost:443") for d in fixed.dropped)
    assert any("public addresses only" in d for d in fixed.dropped)
    assert "Fixed proposal: none (the fix deletes the whole rule" in render_text(assessment)


def test_what_is_left_adding_no_access_is_not_offered() -> None:
    proposed = rule([rest("api.github.com", 443, "*")], "/usr/bin/gh")
    assessment = assess(GH_READ, "gh", proposed, boundary=BOUNDARY)

    fixed = assessment.fixed_proposal
    assert assessment.decision == "blocked"
    assert fixed is not None and not fixed.found
    assert "adds no access" in (fixed.reason or "")


def test_only_a_blocked_decision_gets_a_fixed_proposal_and_each_decision_a_reason() -> None:
    new_host = assess(GH_READ, "pypi", rule([endpoint("pypi.org")], "/usr/bin/pip"))
    assert new_host.decision == "auto_approvable" and new_host.fixed_proposal is None
    assert new_host.decision_reason == (
        "no new tracked-risk findings and no security notes; it adds access"
    )
    # The two delta fields read together: no new findings, yet new access.
    assert new_host.no_new_findings and new_host.adds_access is True
    review = assess(GH_READ, "gh2", rule([endpoint("api.github.com")], "/usr/bin/git"))
    assert review.decision == "needs_review" and review.fixed_proposal is None
    assert review.decision_reason.startswith("a human must review: new findings (")
    assert "l7_bypass_credentialed" in review.decision_reason
