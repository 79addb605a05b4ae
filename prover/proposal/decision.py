"""One decision for a proposal assessment, which cannot contradict itself.

``auto_approvable`` is the gateway's reading (empty delta, no security note, no approval
blocker), and beyond the reference it is also false when a boundary was given and the
merged policy is not proved within it. ``decision`` folds every signal into one value:

* ``invalid``: the proposal cannot be applied (``application_error``);
* ``blocked``: never approve (``approval_blockers`` says why): it reaches always-blocked
  destinations, or, beyond the reference, the merged policy is proved to exceed the given
  boundary (no reviewer can approve access beyond the sandbox's maximum policy);
* ``needs_review``: a human must look (unaccepted findings, security notes, or a boundary
  result that is neither ``within_boundary`` nor ``exceeds_boundary``);
* ``accepted``: nothing new needs review, every finding being an accepted risk, but the
  gateway would not auto-approve it;
* ``auto_approvable``: nothing to review and the gateway would auto-approve it.
"""

from __future__ import annotations

from typing import Literal

from prover.proposal.assessment import ProposalAssessment
from prover.proposal.boundary import boundary_exceeded, boundary_failed

#: An agent left out the boundary and read auto_approvable as "allowed" for a new host.
NO_BOUNDARY_WARNING = (
    "no boundary was given: the proposal adds access, and nothing checked that it stays "
    "within the environment's maximum policy; pass it as boundary before approving"
)

Decision = Literal["invalid", "blocked", "needs_review", "accepted", "auto_approvable"]


def decision_of(assessment: ProposalAssessment) -> Decision:
    if assessment.application_error is not None:
        return "invalid"
    if assessment.approval_blockers:
        return "blocked"
    if assessment.needs_review or boundary_failed(assessment):
        return "needs_review"
    if not assessment.auto_approvable:
        return "accepted"
    return "auto_approvable"


def decided(assessment: ProposalAssessment) -> ProposalAssessment:
    """``assessment`` with ``decision`` set and ``auto_approvable`` consistent with it."""
    failed = boundary_failed(assessment)
    update: dict[str, object] = {}
    if failed:
        update["needs_review"] = True
        update["auto_approvable"] = False
    exceeded = boundary_exceeded(assessment)
    if exceeded is not None:
        update["approval_blockers"] = [*assessment.approval_blockers, exceeded]
    if assessment.boundary is None and assessment.adds_access and assessment.merged_policy:
        update["warnings"] = [*assessment.warnings, NO_BOUNDARY_WARNING]
    settled = assessment.model_copy(update=update)
    return settled.model_copy(update={"decision": decision_of(settled)})
